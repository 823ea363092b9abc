"""Your own images: the sidebar box that turns a zip of class folders into this session's
dataset (the checks and the storage are :mod:`csvm.data.own_images`)."""

from __future__ import annotations

import streamlit as st

from csvm.data.images import UploadError
from csvm.data.own_images import read_image_zip, remove_idle, remove_own, save_own
from explorer.settings import current_config, md_escape, set_config

#: The session's own dataset (its ``own-…`` name) in ``st.session_state``.
OWN_KEY = "own_dataset"
#: Own datasets nobody has used for this long are deleted (their sessions have ended).
IDLE_SECONDS = 2 * 3600


def own_images_box() -> None:
    """The sidebar's "Your own images" box."""
    with st.sidebar.expander("Your own images", icon=":material/photo_library:"):
        st.file_uploader(
            "A zip with one folder of PNG/JPEG images per class",
            type=["zip"],
            key="own_file",
            help="2 to 10 folders (the class names), at least 10 images each, at most "
            "5,000 images and 50 MB in all. They become 28×28 images of a dataset that only "
            "this session's links name, removed from the server when the session ends.",
        )
        st.checkbox("Keep colour (three channels)", key="own_colour")
        st.button(
            "Use these images",
            key="own_go",
            on_click=_use_upload,
            disabled=st.session_state.get("own_file") is None,
        )
        problem = st.session_state.get("own_problem")
        if problem:
            st.error(md_escape(problem))
        summary = st.session_state.get("own_summary")
        if summary and st.session_state.get(OWN_KEY):
            st.caption(md_escape(summary))


def _use_upload() -> None:
    """The button's callback (before the settings' widgets are drawn, so they can change)."""
    upload = st.session_state.get("own_file")
    if upload is None:
        return
    try:
        images = read_image_zip(upload.getvalue(), colour=bool(st.session_state.get("own_colour")))
    except UploadError as err:
        st.session_state["own_problem"] = str(err)
        return
    remove_idle(IDLE_SECONDS)  # other sessions' uploads that nobody uses any more
    previous = st.session_state.get(OWN_KEY)
    if previous:
        remove_own(previous)
    name = save_own(images)
    st.session_state[OWN_KEY] = name
    st.session_state["own_problem"] = ""
    counts = ", ".join(f"{k}: {v}" for k, v in images.counts().items())
    st.session_state["own_summary"] = (
        f"Using your {len(images.y)} images ({counts}) as the dataset {name}."
    )
    names = images.class_names
    set_config(
        current_config().replace(
            dataset=name,
            classes=None,
            class_a=names[0],
            class_b=names[1],
            protocol=None,
            n_train=None,
        )
    )
