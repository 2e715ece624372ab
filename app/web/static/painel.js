// Small enhancements; every page works without them.
document.addEventListener("click", (event) => {
  const button = event.target.closest("[data-copiar]");
  if (!button) return;
  const source = document.getElementById(button.dataset.copiar);
  if (!source || !navigator.clipboard) return;
  navigator.clipboard.writeText(source.textContent.trim()).then(() => {
    button.textContent = "Copiado";
  });
});
