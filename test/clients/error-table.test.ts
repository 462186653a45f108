import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { errorCodes } from "../../src/errors.js";

const CLIENT_DIR = path.resolve(import.meta.dirname, "../../clients/python");
const PYTHON = process.env.HEARTH_TEST_PYTHON ?? "python3";

/**
 * The Python client keeps its own copy of the server's error table (code → status →
 * exception class); this keeps the two in step. For every code it reads what the client
 * makes of an error body with that code, and of an error status alone.
 */
const DUMP = `
import json, sys
from hearth import error
codes = json.loads(sys.argv[1])
print(json.dumps({
    "statusByCode": error._status_by_code,
    "classStatuses": sorted(error._by_status),
    "classByCode": {c: type(error.error_from_body({"error": {"code": c, "message": "m"}})).__name__ for c in codes},
    "classByStatus": {s: type(error.error_from_status(s, None)).__name__ for s in sorted({v["status"] for v in json.loads(sys.argv[2]).values()})},
}))
`;

interface PythonTable {
  statusByCode: Record<string, number>;
  /** The statuses the client has a class of its own for (the rest are APIError). */
  classStatuses: number[];
  classByCode: Record<string, string>;
  classByStatus: Record<string, string>;
}

describe("the Python client's error table", () => {
  it("has every code of errors.ts, with the same status and class, and nothing else", async () => {
    const { stdout } = await promisify(execFile)(
      PYTHON,
      ["-c", DUMP, JSON.stringify(Object.keys(errorCodes)), JSON.stringify(errorCodes)],
      { env: { ...process.env, PYTHONPATH: CLIENT_DIR } },
    );
    const py = JSON.parse(stdout) as PythonTable;
    const serverStatuses = Object.fromEntries(Object.entries(errorCodes).map(([code, e]) => [code, e.status]));
    expect(py.statusByCode).toEqual(serverStatuses);
    for (const [code, { status }] of Object.entries(errorCodes)) {
      // A code in a stream raises what the same status would; only a 500 is the generic APIError.
      expect(py.classByCode[code], code).toBe(py.classByStatus[String(status)]);
      if (status !== 500) expect(py.classByCode[code], code).not.toBe("APIError");
    }
    // And no class for a status the server no longer answers with.
    const classed = [...new Set(Object.values(serverStatuses))].filter((s) => s !== 500).sort((a, b) => a - b);
    expect(py.classStatuses).toEqual(classed);
  });
});
