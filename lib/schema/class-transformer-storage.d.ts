// class-transformer ships no typings for its deep `cjs/storage.js` entry; the factory only reads
// `defaultMetadataStorage` through its own `TransformerStorage` interface.
declare module 'class-transformer/cjs/storage.js' {
  export const defaultMetadataStorage: unknown;
}
