"""Why an offline build failed, when it failed for want of the network: which tool tried
to reach which host, found in what the build printed (a pure function of that text)."""

from __future__ import annotations

import re

NETWORK_FAILURES = (
    # (the tool, a line that says its fetch failed, with the host where the line names one)
    ("npm", re.compile(r"npm (?:ERR!|error) (?:code )?E(?:NOTFOUND|AI_AGAIN|CONNREFUSED|"
                       r"NETUNREACH|CONNRESET)|npm (?:ERR!|error) network request to "
                       r"https?://([^/\s\"']+)")),
    ("go", re.compile(r"dial tcp: lookup ([^\s:]+)|Get \"https?://([^/\"]+)/[^\"]*\": dial tcp")),
    ("cargo", re.compile(r"failed to (?:download|query replaced source registry|get `[^`]+` "
                         r"as a dependency|load source for dependency)|download of \S+ failed")),
    ("maven", re.compile(r"Could not (?:transfer|resolve) (?:artifact|dependencies)|"
                         r"Unknown host ([^\s:]+)")),
    ("pip", re.compile(r"NewConnectionError|Failed to establish a new connection|"
                       r"host='([^']+)', port=\d+")),
    ("", re.compile(r"Could not resolve host: ([^\s)]+)|getaddrinfo (?:ENOTFOUND|EAI_AGAIN) "
                    r"(\S+)|Temporary failure in name resolution|Network is unreachable|"
                    r"Name or service not known")),
)
HOST = re.compile(r"https?://([A-Za-z0-9.-]+\.[A-Za-z]{2,})")
REGISTRY_TOOLS = {
    "registry.npmjs.org": "npm", "registry.yarnpkg.com": "npm",
    "proxy.golang.org": "go", "sum.golang.org": "go",
    "index.crates.io": "cargo", "static.crates.io": "cargo", "crates.io": "cargo",
    "repo.maven.apache.org": "maven", "repo1.maven.org": "maven",
    "pypi.org": "pip", "files.pythonhosted.org": "pip",
}
"""Whose a registry is: a host that a generic line names goes to its tool."""
MOST_HOSTS = 3


def network_hint(output: str) -> str | None:
    """What an offline build's output says it tried to reach ("npm: registry.npmjs.org"),
    or None when nothing in it looks like a failed fetch."""
    tools: dict[str, list[str]] = {}
    for line in output.splitlines():
        for tool, pattern in NETWORK_FAILURES:
            found = pattern.search(line)
            if found is None:
                continue
            named = [group for group in found.groups() if group] or HOST.findall(line)
            for host in named:
                owner = tool or REGISTRY_TOOLS.get(host, "")
                hosts = tools.setdefault(owner, [])
                if host not in hosts:
                    hosts.append(host)
            if not named:
                tools.setdefault(tool, [])
            break
    if tools.get("") == [] and len(tools) > 1:
        del tools[""]  # a generic line beside a tool's own says nothing more
    if not tools:
        return None
    parts = []
    for tool, hosts in sorted(tools.items(), key=lambda item: item[0] == ""):
        where = ", ".join(hosts[:MOST_HOSTS]) or "the network"
        parts.append(f"{tool}: {where}" if tool else where)
    return "; ".join(parts)


def offline_advice(hint: str) -> str:
    return (f"the build tried to reach the network ({hint}), and builds here run with no "
            "network at all: put what it downloads in the bot folder (vendored dependencies, "
            "as `arena new` does), or ask the organiser for build_network = true, which lets "
            "builds reach the package registries only")
