"""The server's matches on a Dask cluster (``[cluster]`` in the league file), and the
league file's refusal of a cluster address that would expose it."""

from __future__ import annotations

from pathlib import Path

import pytest
from league_servers import SAMPLES, write_league

from arena.server.config import LeagueError, load_league
from arena.server.service import LeagueService
from arena.server.store import LeagueStore


def test_ladder_matches_play_on_a_dask_cluster(tmp_path: Path) -> None:
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=None, host="127.0.0.1") as cluster:
        league = load_league(write_league(
            tmp_path, extra=f'\n[cluster]\naddress = "{cluster.scheduler_address}"\n'))
        assert league.cluster is not None
        store = LeagueStore(league.store_path)
        versions = []
        for author, bot in (("alice", "greedy"), ("bob", "random")):
            found = store.authenticate(store.add_author(author))
            assert found is not None
            version = store.add_version(found.id, bot, "1.0", bot, "sha",
                                        str(SAMPLES / bot), 3)
            store.activate(version.id, 1)
            versions.append(version.id)
        service = LeagueService(league)
        assert service._ladder_step(store, salt=0)
        matches = store.matches()
        assert [m.status for m in matches] == ["done"]  # two versions: one table
        for match in matches:
            assert sorted(match.seats) == versions
            assert len(store.results_of(match.match_id)) == 2
            assert Path(str(match.log_path)).is_file()  # the log came back from the worker


def test_a_cluster_open_to_the_network_is_refused(tmp_path: Path) -> None:
    path = write_league(tmp_path, extra='\n[cluster]\naddress = "tcp://10.1.2.3:8786"\n')
    with pytest.raises(LeagueError, match=r"\[cluster\] refusing the cluster address"):
        load_league(path)
    path = write_league(tmp_path, extra='\n[cluster]\naddress = "tls://head:8786"\n'
                        'tls_ca_file = "ca.pem"\n')
    with pytest.raises(LeagueError, match="go together"):
        load_league(path)
