import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UI_EXTENSION, UI_MIME_TYPE, supportsApps } from './apps.js';

describe('supportsApps', () => {
  it("needs text/html;profile=mcp-app in the extension's mimeTypes list, which the extension makes required", () => {
    assert.equal(supportsApps({ extensions: { [UI_EXTENSION]: { mimeTypes: [UI_MIME_TYPE] } } }), true);
    assert.equal(supportsApps({ extensions: { [UI_EXTENSION]: { mimeTypes: ['text/html', UI_MIME_TYPE] } } }), true);
    for (const capabilities of [
      {},
      { extensions: { [UI_EXTENSION]: {} } },
      { extensions: { [UI_EXTENSION]: { mimeTypes: ['text/html'] } } },
      { extensions: { [UI_EXTENSION]: { mimeTypes: UI_MIME_TYPE } } },
      { extensions: { [UI_EXTENSION]: [UI_MIME_TYPE] } },
      { extensions: [UI_EXTENSION] },
    ]) {
      assert.equal(supportsApps(capabilities), false, JSON.stringify(capabilities));
    }
  });
});
