"""``mcpeek rules``: the rule catalog (ID, severity, era, what it checks, spec link)."""

from __future__ import annotations

import argparse
import json

from mcpeek.inspector.cli.base import Command


class RulesCommand(Command):
    name = "rules"
    order = 55
    help = "list the rule catalog"
    description = __doc__ or ""

    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--format",
            choices=("text", "json"),
            default="text",
            help="text (default: one rule per line) or json",
        )

    def run(self, args: argparse.Namespace) -> int:
        from mcpeek import rules
        from mcpeek.rules.base import listed_era

        catalog = rules.catalog()
        if args.format == "json":
            for rule_id, cls in catalog.items():
                print(
                    json.dumps(
                        {
                            "id": rule_id,
                            "severity": cls.severity,
                            "era": listed_era(cls),
                            "summary": cls.summary,
                            "spec": cls.spec,
                        }
                    )
                )
            return 0
        width = max(len(r) for r in catalog) if catalog else 10
        for rule_id, cls in catalog.items():
            print(
                f"{rule_id:<{width}}  {cls.severity:<7}  {listed_era(cls):<6}  "
                f"{cls.summary}\n{'':<{width}}  {cls.spec}"
            )
        print(f"\n{len(catalog)} rules", flush=True)
        return 0
