// Prints the table of environment variables that the README carries.
import { configTable } from "../src/config-table.js";

console.log(configTable());
