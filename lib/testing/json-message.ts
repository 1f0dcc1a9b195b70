// The proto3-JSON mapper lives in the shared layer (lib/proto-json.ts): the FILESYSTEM transport
// reads the same JSON. Kept here under its old name for the testing modules.
export * from '../proto-json';
