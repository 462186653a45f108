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
  adapterArtifact: (sha256: string) => `artifacts/lora/${sha256}.gguf`,
};
