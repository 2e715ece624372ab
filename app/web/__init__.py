"""The dashboard (`/painel`) and the analyst's search (`/busca`): server-rendered pages over the
same service functions as the REST routes and the agent tools. Pages work without JavaScript;
htmx (vendored in `static/vendor`) makes them live where it runs."""
