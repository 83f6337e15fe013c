from devtools.cli import main

main(prog_name="python -m devtools")
