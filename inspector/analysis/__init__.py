"""Correlation: from capture records to conversations and flows (sans-IO).

:class:`Analyzer` is the entry point; see its module for the listener API.
"""

from inspector.analysis.analyzer import AnalysisListener, Analyzer, analyze
from inspector.analysis.conversation import Conversation
from inspector.analysis.flow import Attempt, Entry, Flow

__all__ = ["AnalysisListener", "Analyzer", "Attempt", "Conversation", "Entry", "Flow", "analyze"]
