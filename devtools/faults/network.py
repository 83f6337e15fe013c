"""The network of a fault run: every worker reaches every server other than Kafka through a Toxiproxy
proxy of its own (so a fault can cut the cold sink from the store and nobody else). For an Elasticsearch
that answers 429, 503 or 401, the hot sink's link is pointed at
:class:`~devtools.faults.httpfault.StatusAnswers` for a while.

Kafka is reached directly: its broker tells clients its own address (``advertised.listeners``), so a
proxy in front of the bootstrap port would only carry the first request. Kafka's faults are the
broker's: stopped, killed, frozen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

from devtools.faults.httpfault import StatusAnswers
from devtools.faults.toxiproxy import Proxy, Toxiproxy
from streams.config import Settings

# Which servers each stage talks to (besides Kafka), as (server, setting) pairs.
LINKS: dict[str, tuple[str, ...]] = {
    "assemble": ("registry",),
    "hot": ("registry", "elasticsearch"),
    "cold": ("registry", "store"),
}
ENV_OF = {"registry": "SLUICE_REGISTRY__URL", "elasticsearch": "SLUICE_ELASTICSEARCH__URL",
          "store": "SLUICE_OBJECT_STORE__ENDPOINT_URL"}


@dataclass
class Network:
    settings: Settings
    toxiproxy: Toxiproxy = field(default_factory=Toxiproxy)
    es_answers: StatusAnswers = field(default_factory=StatusAnswers)
    urls: dict[tuple[str, str], str] = field(default_factory=dict)  # (stage, server) -> URL through the proxy

    def start(self) -> Network:
        self.toxiproxy.start()
        self.es_answers.start()
        upstream_url = {"registry": self.settings.registry.url, "elasticsearch": self.settings.elasticsearch.url,
                        "store": self.settings.object_store.endpoint_url}
        for stage, servers in LINKS.items():
            for server in servers:
                url = upstream_url[server]
                proxy: Proxy = self.toxiproxy.add(f"{stage}-{server}", urlsplit(url).netloc)
                self.urls[(stage, server)] = proxy.url_for(url)
        return self

    def stop(self) -> None:
        self.toxiproxy.stop()
        self.es_answers.stop()

    def env(self, stage: str) -> dict[str, str]:
        """The worker's environment: its servers at their proxies' addresses."""
        return {ENV_OF[server]: self.urls[(stage, server)] for server in LINKS.get(stage, ())}

    def links_to(self, server: str) -> list[str]:
        return [f"{stage}-{server}" for stage, servers in LINKS.items() if server in servers]
