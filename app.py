"""CSVM Explorer: entry point (`streamlit run app.py`)."""

import streamlit as st


def main() -> None:
    st.set_page_config(page_title="CSVM Explorer", layout="wide")
    st.title("CSVM Explorer")
    st.write("Convolutional Support Vector Machines, trained live.")


if __name__ == "__main__":
    main()
