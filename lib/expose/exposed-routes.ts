import { RequestMethod, VERSION_NEUTRAL, VersioningType, type Type, type VersioningOptions } from '@nestjs/common';
import {
  HOST_METADATA,
  METHOD_METADATA,
  MODULE_PATH,
  PATH_METADATA,
  VERSION_METADATA,
} from '@nestjs/common/constants.js';
import type { NestContainer } from '@nestjs/core';
import { RoutePathFactory } from '@nestjs/core/router/route-path-factory.js';
import type { ExposeControllersOptions } from './expose.interfaces.js';
import type { RouteTarget } from './route-invoker.js';

type VersionValue = string | typeof VERSION_NEUTRAL | Array<string | typeof VERSION_NEUTRAL>;

/** One route handler of a controller, with every path it is served at and how to reach it. */
export interface ExposableRoute {
  controller: Type<unknown>;
  methodName: string;
  method: Function;
  /** `Controller#method` */
  site: string;
  verb: string;
  /** Paths as the controller declares them (controller path + method path). */
  declared: string[];
  /** Paths as served: global prefix, RouterModule path and URI version included. The first is called. */
  served: string[];
  /** The versions it answers (none for an unversioned or version-neutral route). */
  versions: string[];
  /** How a call reaches it. */
  target: RouteTarget;
}

/**
 * The routes of controllers as Nest serves them. Paths come from Nest's own RoutePathFactory
 * (global prefix and its exclusions, RouterModule paths, URI versioning), so that a route tool
 * calls exactly the path an HTTP client calls, and selectors can use either form.
 */
export class RouteMap {
  private readonly paths: RoutePathFactory;
  private readonly versioning?: VersioningOptions;
  private readonly globalPrefix: string;

  constructor(private readonly container: NestContainer) {
    const config = container.applicationConfig!;
    this.paths = new RoutePathFactory(config);
    this.versioning = config.getVersioning();
    const prefix = config.getGlobalPrefix();
    this.globalPrefix = prefix ? `/${prefix.replace(/^\/+/, '')}` : '';
  }

  routesOf(controller: Type<unknown>, hostModule: Function | undefined, methodNames: string[]): ExposableRoute[] {
    const prototype = controller.prototype as Record<string, Function>;
    const controllerPaths = asList(Reflect.getMetadata(PATH_METADATA, controller) as string | string[] | undefined);
    const modulePath = hostModule ? this.modulePathOf(hostModule) : undefined;
    const versioning = this.versioning;
    const controllerVersion = versioning
      ? ((Reflect.getMetadata(VERSION_METADATA, controller) as VersionValue | undefined) ?? versioning.defaultVersion)
      : undefined;
    const routes: ExposableRoute[] = [];
    for (const methodName of methodNames) {
      const method = prototype[methodName]!;
      const requestMethod = Reflect.getMetadata(METHOD_METADATA, method) as RequestMethod | undefined;
      const methodPaths = Reflect.getMetadata(PATH_METADATA, method) as string | string[] | undefined;
      if (requestMethod === undefined || methodPaths === undefined) continue;
      const verb = RequestMethod[requestMethod] ?? 'GET';
      const methodVersion = Reflect.getMetadata(VERSION_METADATA, method) as VersionValue | undefined;
      const declared: string[] = [];
      const served: string[] = [];
      for (const ctrlPath of controllerPaths) {
        for (const methodPath of asList(methodPaths)) {
          declared.push(joinPath(ctrlPath, methodPath));
          const metadata = {
            ctrlPath,
            methodPath,
            modulePath,
            globalPrefix: this.globalPrefix,
            controllerVersion,
            methodVersion,
            versioningOptions: versioning,
          };
          served.push(...this.paths.create(metadata as never, requestMethod).map((p) => joinPath(undefined, p)));
        }
      }
      const version = methodVersion ?? controllerVersion;
      const versions = (Array.isArray(version) ? version : version === undefined ? [] : [version]).filter(
        (v): v is string => v !== VERSION_NEUTRAL,
      );
      const site = `${controller.name}#${methodName}`;
      routes.push({
        controller,
        methodName,
        method,
        site,
        verb,
        declared: unique(declared),
        served: unique(served),
        versions: versioning ? versions : [],
        target: {
          verb,
          path: served[0] ?? declared[0]!,
          headers: this.selectingHeaders(controller, site, versioning ? versions : []),
        },
      });
    }
    return routes;
  }

  /** Headers that make the app's router pick this handler: its version (header or media type) and host. */
  private selectingHeaders(controller: Function, site: string, versions: string[]): Record<string, string> {
    const headers: Record<string, string> = {};
    const versioning = this.versioning;
    if (versioning && versions.length) {
      if (versioning.type === VersioningType.HEADER) headers[versioning.header.toLowerCase()] = versions[0]!;
      else if (versioning.type === VersioningType.MEDIA_TYPE)
        headers.accept = `application/json;${versioning.key}${versions[0]}`;
      else if (versioning.type === VersioningType.CUSTOM) {
        throw new Error(
          `McpModule: route ${site} cannot be a tool: it answers version ${versions.join(', ')} under CUSTOM versioning, whose extractor is the app's own code, so a tool call cannot be made to select that version. Expose a version-neutral route, use URI, header or media-type versioning, or leave it out of "expose.routes".`,
        );
      }
    }
    const host = Reflect.getMetadata(HOST_METADATA, controller) as unknown;
    if (host !== undefined) {
      const hosts = asList(host as string | string[]);
      if (hosts.length !== 1 || typeof hosts[0] !== 'string' || /[:*]/.test(hosts[0])) {
        throw new Error(
          `McpModule: route ${site} cannot be a tool: its controller is bound to the host ${String(host)}, a pattern or several hosts, so a tool call cannot tell which host to request. Bind it to one fixed host, or leave it out of "expose.routes".`,
        );
      }
      headers.host = hosts[0];
    }
    return headers;
  }

  private modulePathOf(module: Function): string | undefined {
    const applicationId = (this.container.getModules() as { applicationId?: string }).applicationId;
    return (
      (Reflect.getMetadata(MODULE_PATH + (applicationId ?? ''), module) as string | undefined) ??
      (Reflect.getMetadata(MODULE_PATH, module) as string | undefined)
    );
  }
}

/** `METHOD /path` as a tool description prints a route (the path as served). */
export function routeLabel(route: ExposableRoute): string {
  return `${route.verb} ${route.target.path}`;
}

/** ", API version 2" (or versions), for descriptions: two versions of one path must read differently. */
export function versionNote(route: ExposableRoute): string {
  if (route.versions.length === 0) return '';
  return route.versions.length === 1
    ? `, API version ${route.versions[0]}`
    : `, API versions ${route.versions.join(', ')}`;
}

/** Whether a selector names this route: its handler name, or `METHOD /path` as declared or as served. */
export function selects(selector: string, route: ExposableRoute): boolean {
  if (selector === route.methodName) return true;
  const parsed = parseSelector(selector);
  if (!parsed || (parsed.verb !== route.verb && parsed.verb !== 'ALL')) return false;
  return route.declared.includes(parsed.path) || route.served.includes(parsed.path);
}

function parseSelector(selector: string): { verb: string; path: string } | undefined {
  const match = /^\s*([A-Za-z]+)\s+(\S+)\s*$/.exec(selector);
  return match ? { verb: match[1]!.toUpperCase(), path: joinPath(undefined, match[2]) } : undefined;
}

/**
 * Fails on a selector of an `expose.routes` entry that names no route of its controllers (in
 * `include`, `exclude`, `tools` or `tags`): a selector that selects nothing would silently
 * expose what it was written to hide. The error names the routes it could have meant.
 */
export function checkSelectors(
  entry: ExposeControllersOptions,
  index: number,
  routes: ExposableRoute[],
  tagsOf: (route: ExposableRoute) => string[],
): void {
  const where = `expose.routes[${index}]`;
  const lists: Array<[string, string[] | undefined]> = [
    ['include', entry.include],
    ['exclude', entry.exclude],
    ['tools', entry.tools ? Object.keys(entry.tools) : undefined],
  ];
  for (const [list, selectors] of lists) {
    for (const selector of selectors ?? []) {
      if (routes.some((route) => selects(selector, route))) continue;
      throw new Error(
        `McpModule: ${where}.${list} has "${selector}", which matches no route of ${controllerNames(entry)}, so it would select nothing. ` +
          `A selector is a handler name, or "METHOD /path" with the path as the controller declares it or as the tool description prints it. ` +
          `${closest(selector, routes)} Fix the selector, or remove it.`,
      );
    }
  }
  for (const tag of entry.tags ?? []) {
    if (routes.some((route) => tagsOf(route).includes(tag))) continue;
    const known = unique(routes.flatMap(tagsOf));
    throw new Error(
      `McpModule: ${where}.tags has "${tag}", which no route of ${controllerNames(entry)} carries (@ApiTags), so it would select nothing. ` +
        `Tags found: ${known.length ? known.map((t) => `"${t}"`).join(', ') : 'none'}. Fix the tag, or remove it.`,
    );
  }
}

function controllerNames(entry: ExposeControllersOptions): string {
  return (entry.controllers ?? []).map((c) => c.name).join(', ') || 'its controllers';
}

/** The routes a selector could have meant, nearest first. */
function closest(selector: string, routes: ExposableRoute[]): string {
  if (routes.length === 0) return 'Those controllers have no routes.';
  const wanted = parseSelector(selector);
  const score = (route: ExposableRoute): number => {
    if (!wanted) return distance(selector, route.methodName);
    const path = Math.min(...[...route.declared, ...route.served].map((p) => distance(wanted.path, p)));
    return path + (wanted.verb === route.verb ? 0 : 5);
  };
  const ranked = [...routes].sort((a, b) => score(a) - score(b)).slice(0, 5);
  return `The routes it could mean: ${ranked.map((r) => `"${routeLabel(r)}" (${r.controller.name}.${r.methodName}${r.declared[0] !== r.target.path ? `, declared as "${r.verb} ${r.declared[0]}"` : ''})`).join(', ')}.`;
}

/** Levenshtein distance, for ranking the suggestions of a selector (short strings, at bootstrap only). */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_v, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

function asList<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return [''] as T[];
  return Array.isArray(value) ? (value.length ? value : ([''] as T[])) : [value];
}

function unique<T>(values: T[]): T[] {
  return [...new Set(values)];
}

export function joinPath(base: string | undefined, path: string | undefined): string {
  const joined = `/${base ?? ''}/${path ?? ''}`.replace(/\/+/g, '/');
  return joined.length > 1 ? joined.replace(/\/$/, '') : joined;
}
