// Prints the tables of environment variables, one per tier: docs/configuration.md carries each
// under its heading, and the README the first ("Start here").
import { configTable } from "../src/config/table.js";
import { tiers } from "../src/config/variables.js";

for (const tier of tiers) console.log(`## ${tier.title}\n\n${configTable(tier.variables)}\n`);
