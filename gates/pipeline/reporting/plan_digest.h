#pragma once

// The plan digest: what a reviewer approves. It binds an approval to exactly what will run, so
// an approval for one plan cannot be replayed against another (DESIGN.md rule 3).

#include <string>

#include <nlohmann/json.hpp>

#include "gates/intent/model.h"

namespace fabgate::pipeline {

// The canonical document the digest is computed over. It is built from the parsed model, not
// file bytes, so it is what runs that counts, never how the YAML was laid out:
//   - the intent commit and intent root;
//   - the change: targets, window, bounds and waves, confirm timeout, steps and rollback (every
//     field that is sent), acceptance (settle, probes, the continuous probe), rule set names and
//     expected differences;
//   - every inventory device (snapshots and comparisons cover them all), with its endpoints,
//     platform, role, credentials (users, key paths, agent use), data addresses and labels;
//   - the settings that shape a run (SSH, probes, snapshot age, approval policy);
//   - the compare rule sets in force, with the sha256 of their text (compiled-in defaults
//     included, so a fabgate upgrade that changes them changes the digest);
//   - the sha256 of every policy file at the commit (exceptions, compat, collectors,
//     allowed_signers, rule sets).
// Source locations are left out: moving a line changes no behaviour.
nlohmann::json plan_digest_input(const intent::IntentRepository& repository,
                                 const intent::Change& change);

// "sha256:<hex>" over the compact serialization of plan_digest_input (object keys sorted).
std::string plan_digest(const intent::IntentRepository& repository, const intent::Change& change);

// The same digest for a document that was stored (plan.json's "digest_input"), so `approve`
// can check that a plan file was not edited after it was written.
std::string digest_of_input(const nlohmann::json& digest_input);

}  // namespace fabgate::pipeline
