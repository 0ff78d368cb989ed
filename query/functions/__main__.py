"""Prints the supported functions as the README's Markdown table (`python -m query.functions`)."""

from query.functions import supported

print("| family | functions |\n|---|---|")
for family, entries in supported().items():
    print(f"| {family} | {', '.join(f'`{e.name}`' for e in sorted(entries, key=lambda e: e.name))} |")
