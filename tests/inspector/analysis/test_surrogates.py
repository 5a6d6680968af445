"""A message text holding a lone surrogate (a record built in a test or by a user's
plugin: a capture's reader never makes one) is analysed, never raised on."""

from __future__ import annotations

from mcpeek.inspector.analysis import Analyzer
from mcpeek.inspector.records import Msg
from mcpeek.rules.engine import RuleEngine
from mcpeek.rules.reported import RULE_CRASHED, Reported


def test_a_lone_surrogate_in_a_message_is_correlated_not_raised() -> None:
    found: list[Reported] = []
    analyzer = Analyzer([RuleEngine(found.append)], keep_flows=True)
    call = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\ud800"}}'
    answer = '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\udc80"}]}}'
    # (UnicodeEncodeError from the envelope decode, before: the analyser must not raise)
    analyzer.feed(Msg(seq=1, t=0.0, dir="c2s", ch="stdio", raw=call))
    analyzer.feed(Msg(seq=2, t=0.1, dir="s2c", ch="stdio", raw=answer))
    analyzer.close_all()
    assert analyzer.flows is not None
    (flow,) = analyzer.flows
    assert flow.method == "tools/call" and flow.status == "complete"
    assert flow.msgs == [1, 2]
    assert RULE_CRASHED not in [v.rule for v in found]
