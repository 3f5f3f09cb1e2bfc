#pragma once

// The etcd client settings of a fabric's coordination store, from fabgate.yaml's
// `coordination:` block (docs/coordination.md). One conversion for every command that opens the
// store, so the budgets gate, recover and `fabgate status` cannot read the same block two ways.

#include <filesystem>

#include "adapters/etcd/etcd_client.h"
#include "gates/intent/model.h"

namespace fabgate::coordination {

// `intent_dir`: the intent folder in the work tree; relative ca/cert/key paths are relative to it.
etcd::EtcdSettings store_settings(const intent::CoordinationSettings& settings,
                                  const std::filesystem::path& intent_dir);

}  // namespace fabgate::coordination
