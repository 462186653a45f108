// Prints docs/api.md's table of the OpenAI endpoints' request parameters and their status.
import { parameterTable } from "../src/api/contract/parameter-table.js";

console.log(parameterTable());
