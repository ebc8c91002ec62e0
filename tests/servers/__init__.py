"""Real servers for the tests: the Oxigraph server, a quipu-dialect server and a
misbehaving socket server. Started by the fixtures in :mod:`servers.fixtures` on free
loopback ports and stopped afterwards."""
