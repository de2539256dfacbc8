"""Solver: the allocator benchmark grid (Trainers J x pool size) live, build and solve times."""

import streamlit as st

st.title("Solver")
