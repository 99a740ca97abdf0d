// Module options: the fragment is the argument of `McpModule.forRoot()` without its braces'
// surroundings, e.g. `redis: { url }` lines; it is checked as an `McpModuleOptions` object.
export const options: Parameters<typeof McpModule.forRoot>[0] = {
  name: 'snippet',
  version: '1.0.0',
  // <snippet>
};
