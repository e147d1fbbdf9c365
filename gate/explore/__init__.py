"""Explore: every call site a baseline reached, faulted within a budget and judged by the universal oracles"""
