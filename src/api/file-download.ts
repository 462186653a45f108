import type { FileRow } from "../db/schema/batches.js";

/**
 * The headers of a file of the files API answered as a download (GET /v1/files/{id}/content,
 * and the pages' link to it): its bytes, and its name with the characters that would end the
 * header's quoted string replaced.
 */
export function downloadHeaders(file: Pick<FileRow, "bytes" | "filename">): Record<string, string> {
  return {
    "content-type": "application/octet-stream",
    "content-length": String(file.bytes),
    "content-disposition": `attachment; filename="${file.filename.replace(/["\\\r\n]/g, "_")}"`,
  };
}
