// oidc-provider ships no typings; the tests use a small part of it.
declare module 'oidc-provider' {
  const Provider: any;
  export default Provider;
  export const errors: Record<string, new (description?: string) => Error>;
}
