"""mountbench: how does the storage behind these directories really compare?"""

__version__ = "0.1.0"
