"""Product samples run on the engine alone, with the offline model's policies."""

import pytest

from engine import InMemoryStore, OfflineModel, Runner
from reviewconsole.workflows import all_specs, get


@pytest.fixture
def offline_model():
    model = OfflineModel()
    for spec in all_specs():
        for agent, policy in spec.offline_policies.items():
            model.register(agent, policy)
    return model


@pytest.fixture
def runner_for(offline_model):
    def make(name):
        return Runner(get(name).build(None), InMemoryStore(), app_name=name, model=offline_model)

    return make
