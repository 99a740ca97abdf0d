import assert from 'node:assert/strict';
import { SchemaGenerationError } from '../../lib/schema/schema-generation.error.js';

/** The SchemaGenerationError `run` throws; fails the test when it throws nothing or something else. */
export function generationError(run: () => unknown): SchemaGenerationError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof SchemaGenerationError, `expected SchemaGenerationError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected a SchemaGenerationError');
}
