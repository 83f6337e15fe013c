from streams.cli.main import cli

cli()
