"""The cluster is not open to the world.

A Dask scheduler runs any code its clients send on its workers. So: the compose file
publishes no scheduler port on the host's interfaces; ``arena season run`` refuses a
plain-TCP scheduler on another machine unless told the network is private; and a cluster
over TLS with certificates plays a season's match, while a client without a certificate
is turned away.
"""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from arena.cli import main
from arena.league.cluster import (
    ClusterSecurityError,
    ClusterTLS,
    DaskExecutor,
    cluster_security,
    is_local_address,
)
from arena.league.driver import run_season
from arena.league.season import SeasonError, load_season

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "sample_bots" / "python"


def season_file(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "season.toml"
    path.write_text(f"""
[season]
name = "tls"
matches_per_group = 1
duplicate_deals = false  # one match per pair: these tests count matches, not deals
entrants = ["{BOTS}/random", "{BOTS}/greedy"]
{extra}

[rules]
target_score = 50

[sandbox]
backend = "plain"

[output]
folder = "{tmp_path / 'out'}"
""")
    return path


# -- the compose file ----------------------------------------------------------------------

def test_compose_publishes_no_scheduler_port_on_the_hosts_interfaces() -> None:
    services = yaml.safe_load((ROOT / "docker" / "compose.yaml").read_text())["services"]
    for name, service in services.items():
        for port in service.get("ports", []):
            published = str(port)
            assert published.startswith("127.0.0.1:"), f"{name} publishes {published}"
            assert not published.endswith(":8786"), f"{name} publishes the scheduler"
    assert "8786" in [str(p) for p in services["scheduler"]["expose"]]


# -- the refusal ---------------------------------------------------------------------------

@pytest.mark.parametrize(("address", "local"), [
    ("tcp://127.0.0.1:8786", True), ("tcp://localhost:8786", True), ("127.0.0.2:1", True),
    ("tcp://[::1]:8786", True), ("inproc://x/1/2", True), ("tcp://192.0.2.7:8786", False),
    ("tcp://scheduler:8786", False), ("tcp://0.0.0.0:8786", False), ("10.0.0.1:8786", False),
])
def test_which_addresses_are_local(address: str, local: bool) -> None:
    assert is_local_address(address) is local


def test_a_remote_plain_tcp_cluster_is_refused_with_the_reason(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    season = season_file(tmp_path)
    assert main(["season", "run", str(season), "--cluster", "tcp://192.0.2.7:8786"]) == 2
    error = capsys.readouterr().err
    assert "refusing the cluster address tcp://192.0.2.7:8786" in error
    assert "--insecure-cluster" in error and "tls://" in error
    assert "Traceback" not in error


def test_the_season_files_cluster_is_refused_too(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    season = season_file(tmp_path, 'executor = "dask"\ncluster = "tcp://scheduler:8786"')
    assert main(["season", "run", str(season)]) == 2
    assert "refusing the cluster address tcp://scheduler:8786" in capsys.readouterr().err


def test_tls_without_certificates_is_refused(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    season = season_file(tmp_path)
    assert main(["season", "run", str(season), "--cluster", "tls://192.0.2.7:8786"]) == 2
    assert "no certificates were given" in capsys.readouterr().err
    with pytest.raises(SeasonError, match="go together"):
        load_season(season_file(tmp_path, 'tls_ca_file = "ca.pem"'))


def test_insecure_cluster_is_an_explicit_choice() -> None:
    assert cluster_security("tcp://192.0.2.7:8786", None, insecure=True) is None
    assert cluster_security("tcp://127.0.0.1:8786", None, insecure=False) is None
    with pytest.raises(ClusterSecurityError):
        cluster_security("tcp://192.0.2.7:8786", None, insecure=False)


# -- a cluster over TLS --------------------------------------------------------------------

def write_certificates(folder: Path) -> ClusterTLS:
    """A CA and one certificate it signed for 127.0.0.1 (the scheduler's, the workers' and
    the driver's: one identity is enough for a test)."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "arena test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    certificate = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "arena")]))
        .issuer_name(ca_name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(
            [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False)
        .sign(ca_key, hashes.SHA256()))
    tls = ClusterTLS(folder / "ca.pem", folder / "arena.pem", folder / "arena.key")
    tls.ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    tls.cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    tls.key_file.write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    return tls


@pytest.mark.slow
def test_a_tls_cluster_plays_a_match_and_turns_away_clients_without_a_certificate(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from distributed import Client, LocalCluster
    from distributed.security import Security

    tls = write_certificates(tmp_path)
    security = Security(
        tls_ca_file=str(tls.ca_file), tls_scheduler_cert=str(tls.cert_file),
        tls_scheduler_key=str(tls.key_file), tls_worker_cert=str(tls.cert_file),
        tls_worker_key=str(tls.key_file), tls_client_cert=str(tls.cert_file),
        tls_client_key=str(tls.key_file), require_encryption=True)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,  # type: ignore[no-untyped-call]
                      protocol="tls", host="127.0.0.1", security=security,
                      dashboard_address=None) as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tls://127.0.0.1:")
        # An attacker without a certificate signed by the CA cannot connect.
        with pytest.raises((OSError, TimeoutError)):
            Client(address.replace("tls://", "tcp://"), timeout=3)  # type: ignore[no-untyped-call]
        with pytest.raises((OSError, TimeoutError)):
            Client(address, security=Security.temporary(), timeout=3)  # type: ignore[no-untyped-call]
        season = season_file(tmp_path)
        code = main(["season", "run", str(season), "--cluster", address,
                     "--tls-ca-file", str(tls.ca_file), "--tls-cert", str(tls.cert_file),
                     "--tls-key", str(tls.key_file)])
        assert code == 0, capsys.readouterr()
    assert len(list((tmp_path / "out" / "logs").glob("*.jsonl.gz"))) == 1


@pytest.mark.slow
def test_a_local_cluster_can_run_over_tls(tmp_path: Path) -> None:
    from distributed.security import Security

    summary = run_season(load_season(season_file(tmp_path)),
                         DaskExecutor(None, workers=1, security=Security.temporary()))
    assert summary.played == 1 and summary.failed == 0
