import subprocess
import sys

from deskresearch.mcp.stdio import build_parser


def test_without_the_sdk_the_command_says_which_extra_to_install() -> None:
    code = (
        "import sys; sys.modules['mcp'] = None\n"  # as if the extra were not installed
        "from deskresearch.__main__ import main; sys.exit(main(['mcp']))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False, stdin=subprocess.DEVNULL)  # fmt: skip
    assert proc.returncode == 3  # a setting to fix: install the extra and proc.stdout == ""
    assert "pip install '.[mcp]' in deskresearch's folder" in proc.stderr


def test_the_command_takes_every_research_setting_and_the_clis_places() -> None:
    ns = build_parser().parse_args(["-o", "/tmp/r", "--url-per-query", "2", "--config", "c.toml"])
    assert (ns.output_dir, ns.url_per_query, ns.config) == ("/tmp/r", "2", "c.toml")
