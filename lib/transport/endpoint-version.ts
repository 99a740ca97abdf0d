import type { VERSION_NEUTRAL } from '@nestjs/common';

/** A controller version as Nest takes it (`@Controller({ version })`). @publicApi */
export type McpEndpointVersion = string | typeof VERSION_NEUTRAL | Array<string | typeof VERSION_NEUTRAL>;
