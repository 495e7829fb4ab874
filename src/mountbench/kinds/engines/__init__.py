"""The engines the http workload kind drives: nginx (the server, one per sample, with a
generated config) and wrk (the load). Owned by kinds/http.py; may import host/.
Of kinds/'s sub-packages it may import: none."""
