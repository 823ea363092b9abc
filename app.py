"""CSVM Explorer: the entry point (``streamlit run app.py``).

Worker processes are spawned, and a spawned child re-imports this file as ``__mp_main__``:
everything that draws stays inside :func:`explorer.app.main`, called only when run.
"""

from explorer.app import main

if __name__ == "__main__":
    main()
