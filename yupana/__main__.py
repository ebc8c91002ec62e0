from yupana.cli import entry

entry()
