#!/usr/bin/env python3
"""Writes every ```swift block of README.md, of the DocC articles (Sources/*/*.docc) and of
the doc comments in Sources/ as a Swift file that compiles only if the example does, for
Tests/Consumer's DocSnippets target.

Each example becomes the body of a function whose parameters are the values examples assume
(`client`, `base`, `server`, ...); types they assume (`User`, ...) are in Prelude.swift.
An example that shows its own `import` lines is a file a reader copies as it is: it gets
exactly those imports (and only the parameters whose types they make visible), so an example
that needs a module it does not import fails here as it would for the reader. One without
imports is a fragment and gets Courier, CourierTesting and Foundation.
An example that declares tests (`@Test`, `@Suite`) is a test file: its declarations go in a
struct of their own, with no parameters, and `@testable import MyService` (the reader's own
module) brings the code the quick start has the reader write (Examples/QuickStart between
`// README:begin` and `// README:end`) into that struct instead.
A block that starts with `// swift-tools-version` is a manifest: it is written to
`manifests/` instead, for `swift package dump-package`. A block that imports a package of
the server ecosystem Courier cannot fetch here (swift-log's `Logging`, swift-metrics'
`Metrics`, swift-distributed-tracing's `Tracing`: the documented adapters) is a file of its
own, compiled against Tests/Consumer's stand-ins, which declare those packages' signatures.

usage: doc-snippets.py REPO OUTPUT_DIR MANIFEST_DIR
"""
import pathlib
import re
import sys

repo, output, manifests = (pathlib.Path(arg) for arg in sys.argv[1:4])
output.mkdir(parents=True, exist_ok=True)
manifests.mkdir(parents=True, exist_ok=True)

blocks = []
for path in sorted(repo.glob("Sources/**/*.swift")):
    inside, lines, start = False, [], 0
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        stripped = line.strip()
        if not stripped.startswith("///"):
            inside = False
            continue
        text = stripped[3:]
        text = text[1:] if text.startswith(" ") else text
        if not inside and text.strip() == "```swift":
            inside, lines, start = True, [], number + 1
        elif inside and text.strip() == "```":
            blocks.append((f"{path.relative_to(repo)}:{start}", "\n".join(lines)))
            inside = False
        elif inside:
            lines.append(text)
for path in [repo / "README.md", *sorted(repo.glob("Sources/*/*.docc/**/*.md"))]:
    text = path.read_text(encoding="utf-8")
    for match in re.finditer(r"```swift\n(.*?)```", text, re.S):
        line = text[: match.start()].count(chr(10)) + 2
        blocks.append((f"{path.relative_to(repo)}:{line}", match.group(1)))
quick_start = (repo / "Examples/QuickStart/QuickStart.swift").read_text(encoding="utf-8")
quick_start = quick_start.split("// README:begin\n", 1)[1].split("// README:end", 1)[0]

# Each assumed value with its type and the modules, any one of which makes the type visible.
CORE = {"Courier", "CourierCore"}
PARAMETERS = [
    ("base: URL", CORE | {"Foundation"}),
    ("url: URL", CORE | {"Foundation"}),
    ("transport: any Transport", CORE),
    ("client: Client", CORE),
    ("stub: StubTransport", {"CourierTesting"}),
    ("server: MockServer", {"CourierTesting"}),
    ("phone: String", None),
    ("headers: [String: String]", None),
    ("endpoint: Endpoint<User>", CORE),
    ("id: Int", None),
    ("backoff: Duration", None),
    ("clock: any Clock<Duration>", None),
    ("key: SymmetricKey", None),
]
# What a fragment without imports of its own is compiled with.
FRAGMENT_IMPORTS = (
    "import Courier\nimport CourierTesting\nimport Foundation\n"
    "#if canImport(FoundationNetworking)\n  import FoundationNetworking\n#endif\n"
)
# Modules Courier cannot fetch here, which Tests/Consumer declares as stand-ins with the
# signatures of the versions the documented adapters were written for.
STAND_INS = {"Logging", "Metrics", "Tracing"}
count = 0
for index, (origin, code) in enumerate(blocks):
    if code.lstrip().startswith("// swift-tools-version"):
        folder = manifests / f"manifest{index}"
        folder.mkdir(exist_ok=True)
        (folder / "Package.swift").write_text(code, encoding="utf-8")
        continue
    is_test_file = re.search(r"^\s*@(Test|Suite)\b", code, re.M) is not None
    testable = re.search(r"^\s*@testable import \w+\s*$", code, re.M) is not None
    if testable:
        code = quick_start + "\n" + code
    indent = "  " if is_test_file else "    "
    body = "\n".join(
        indent + line if line else ""
        for line in code.split("\n")
        if not re.match(r"^(@testable )?import \w+$", line.strip())
    )
    own = re.findall(r"^\s*import (\w+)\s*$", code, re.M)
    testing = (
        "import Testing\n"
        if "Testing" not in own and (is_test_file or "#expect" in code or "#require" in code)
        else ""
    )
    if own:
        imports = "".join(f"import {module}\n" for module in own)
        visible = set(own)
    else:
        imports = FRAGMENT_IMPORTS
        visible = CORE | {"CourierTesting", "Foundation"}
    parameters = ", ".join(
        declaration for declaration, modules in PARAMETERS if modules is None or modules & visible
    )
    if set(own) & STAND_INS:
        # An adapter to a package of the Swift server ecosystem: its declarations as the
        # reader copies them, compiled against Tests/Consumer's stand-ins of that package, in
        # an enum of their own so that two examples may declare the same adapter.
        source = f"// {origin}\n{imports}{testing}\nenum Snippet{index} {{\n{body}\n}}\n"
    elif is_test_file:
        source = f"// {origin}\n{imports}{testing}\nstruct Snippet{index} {{\n{body}\n}}\n"
    else:
        source = (
            f"// {origin}\n{imports}{testing}\n"
            f"enum Snippet{index} {{\n  static func run({parameters}) async throws {{\n"
            f"{body}\n  }}\n}}\n"
        )
    (output / f"Snippet{index}.swift").write_text(source, encoding="utf-8")
    count += 1
print(f"{count} examples written to {output}")

