// What the docs' ```ts fragments may use without importing it: the imports an app would have,
// and stand-ins for the app's own classes the fragments mention. test/e2e/docs.e2e-spec.ts puts
// this file before every fragment (a block that does not start with `import`) and type-checks it.
import 'reflect-metadata';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  Controller,
  Delete,
  Get,
  Inject,
  Injectable,
  Module,
  Param,
  ParseIntPipe,
  Post,
  Body,
  Query,
  Scope,
  UseFilters,
  UseGuards,
  Catch,
  HttpException,
  Logger,
  NotFoundException,
  UnauthorizedException,
  VersioningType,
  type ArgumentsHost,
  type CanActivate,
  type ExceptionFilter,
  type ExecutionContext,
  type INestApplication,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Test, type TestingModule } from '@nestjs/testing';
import type { Request, Response } from 'express';
import { Throttle, SkipThrottle } from '@nestjs/throttler';
import { IsEnum, IsIn, IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import { Observable, interval, lastValueFrom, toArray, map, take, endWith } from 'rxjs';
import {
  AppView,
  Args,
  Complete,
  Content,
  Ctx,
  Emit,
  ExposeRoute,
  McpApp,
  McpConcurrency,
  McpContext,
  McpError,
  McpExecutionContext,
  McpHeader,
  McpModule,
  McpRateLimit,
  McpRegistry,
  McpRequest,
  McpTimeout,
  Prompt,
  PromptMessage,
  PromptRepository,
  RequireScopes,
  Resource,
  ResourceContent,
  ResourceNotFoundError,
  ResourceRepository,
  ResourceTemplate,
  SchemaProperty,
  Skill,
  Tool,
  ToolError,
  ToolSets,
  appResult,
  resolveSafePath,
  withJsonSchema,
  type CompletionContext,
  type InferArgs,
  type McpContextType,
  type McpPrincipal,
  type McpPromptRepository,
  type McpRepositoryPageRequest,
  type McpResourceRepository,
} from 'nestjs-model-context';
import { McpSessionAdmin } from 'nestjs-model-context/sessions';
import { McpEvents, McpHealthIndicator } from 'nestjs-model-context/telemetry';
import { McpInProcessTransport, McpStdio, McpStdioLogger } from 'nestjs-model-context/transports';
import { McpTestClient, McpTestError } from 'nestjs-model-context/testing';

// Stand-ins for the app's own code that the fragments call.
declare const app: INestApplication;
declare const registry: McpRegistry;
declare const DOCS_ROOT: string;
declare const WAREHOUSE: unique symbol;
declare function Public(): ClassDecorator & MethodDecorator;
declare function Roles(...roles: string[]): ClassDecorator & MethodDecorator;
declare function ApiExcludeController(): ClassDecorator;
declare class JwtAuthGuard implements CanActivate {
  canActivate(): boolean;
}
declare class AdminGuard implements CanActivate {
  canActivate(): boolean;
}
declare class StaffOnly implements CanActivate {
  canActivate(): boolean;
}
declare class ConfigService {
  getOrThrow<T = string>(key: string): T;
}
declare class TenantService {
  of(id: string | undefined): Promise<string>;
}
declare class AuditService {
  sessionEnded(id: string, reason: string, state: unknown): void;
}
interface Note {
  id: string;
  folder: string;
  body: string;
}
declare class NotesService {
  list(): Note[];
  find(folder: string, id: string): Note | undefined;
  ids(folder?: string): string[];
}
interface Order {
  id: string;
  status: string;
}
declare class OrdersService {
  open(): Order[];
  ship(id: string): Order[];
}
interface Article {
  id: string;
  slug: string;
  title: string;
}
declare class ArticlesService {
  page(query: { after?: string; limit: number }): Promise<Article[]>;
  body(id: string): Promise<string | undefined>;
}
declare class OrdersController {}
declare class PlaceOrderInput {
  lines: string[];
}
declare class PlaceOrderCommand {
  constructor(customerId: string, lines: string[]);
}
declare class GetOrderStatsQuery {}
declare class NoteRefDto {
  folder: string;
  id: string;
}
declare class ShipDto {
  id: string;
}
declare class SkuDto {
  sku: string;
}
declare class ReportDto {
  quarter: string;
}
declare class ApprovalDto {
  approved: boolean;
}
declare class BuildReportDto {
  sections: number;
}
declare enum Language {
  TypeScript = 'typescript',
  Python = 'python',
}
declare class InvoiceIdDto {
  invoiceId: string;
}
declare class RevenueDto {
  year: number;
}
declare class RolesModule {}
declare class RoleStore {
  setsOf(principalId: string): Promise<string[]>;
}
