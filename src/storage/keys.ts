/**
 * Where things live in the BlobStore. Uploaded files sit under their model; converted
 * adapters sit at content-hash keys, so identical adapters share one file and a
 * changed adapter never reuses a path (node-llama-cpp caches adapters by path).
 */
export const storageKeys = {
  modelFiles: (accountId: string, modelId: string) => `models/${accountId}/${modelId}/files/`,
  modelFile: (accountId: string, modelId: string, fileName: string) =>
    `models/${accountId}/${modelId}/files/${fileName}`,
  model: (accountId: string, modelId: string) => `models/${accountId}/${modelId}/`,
  /** Everything of an account's models (its storage quota counts their uploaded files). */
  accountModels: (accountId: string) => `models/${accountId}/`,
  /** A file of the files API (a batch's input, output or errors); its quota counts them too (files table). */
  accountFile: (accountId: string, fileId: string) => `files/${accountId}/${fileId}.jsonl`,
  adapterArtifact: (sha256: string) => `artifacts/lora/${sha256}.gguf`,
};
