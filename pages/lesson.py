"""The Lesson page: six steps that lead a class through the app, each opening the right
page with the right settings (content in :mod:`explorer.lesson`, drawing in
:mod:`explorer.lesson_view`)."""

from explorer.app import ensure_app
from explorer.lesson_view import main

ensure_app()  # a page's own URL on a fresh server: run it inside the app
main()
