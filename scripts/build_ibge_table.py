"""Rebuild fixtures/reference/municipios-ibge.csv from the PyPI package cidade-ibge-tom (MIT).

The package maps Receita's TOM/SIAFI municipality codes to IBGE codes for 5,570 municipalities.
It pins old versions of pytest and mypy as runtime dependencies, so the project ships its table
as data instead of depending on it. Run: python scripts/build_ibge_table.py

Each municipality's state is read from its IBGE code (the first two digits are the state's):
the package's labels hold a state cut to one letter (`Governador Jorge Teixeira-R`, of RO).
"""

import ast
import csv
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.domain.codes import UF_IBGE

VERSION = "0.1.1"
STATE_OF = {code: uf for uf, code in UF_IBGE.items()}
OUTPUT = Path(__file__).resolve().parent.parent / "fixtures" / "reference" / "municipios-ibge.csv"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "-q",
                "-d",
                tmp,
                f"cidade-ibge-tom=={VERSION}",
            ],
            check=True,
        )
        wheel = next(Path(tmp).glob("*.whl"))
        with zipfile.ZipFile(wheel) as archive:
            source = archive.read("cidade_ibge_tom/cidade.py").decode("utf-8")
    tree = ast.parse(source)
    table = next(
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "cidade"
    )
    rows = []
    for (ibge, tom), label in ast.literal_eval(table).items():
        name, _, _ = label.rpartition("-")
        rows.append((tom, ibge, name, STATE_OF[ibge[:2]]))
    rows.sort()
    with OUTPUT.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out, delimiter=";", lineterminator="\n")
        writer.writerow(("codigo_tom", "codigo_ibge", "nome", "uf"))
        writer.writerows(rows)
    print(f"{len(rows)} municipalities written to {OUTPUT}")


if __name__ == "__main__":
    main()
