"""Correlation: from capture records to conversations and flows (sans-IO).

:class:`Analyzer` is the entry point; see its module for the listener API.
"""

from mcpeek.inspector.analysis.analyzer import Analyzer, analyze
from mcpeek.inspector.analysis.conversation import Conversation
from mcpeek.inspector.analysis.flow import NOTIFICATION_WINDOW, Attempt, Entry, Flow
from mcpeek.inspector.analysis.listener import AnalysisListener

__all__ = [
    "NOTIFICATION_WINDOW",
    "AnalysisListener",
    "Analyzer",
    "Attempt",
    "Conversation",
    "Entry",
    "Flow",
    "analyze",
]
