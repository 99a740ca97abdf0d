import { Injectable } from '@nestjs/common';
import { Args, Resource, ResourceTemplate } from 'nestjs-model-context';
import { PNG_1X1_BASE64 } from './media.js';

/** The resources the conformance suite reads; `test://static-text` comes first in resources/list. */
@Injectable()
export class ConformanceResources {
  @Resource({
    uri: 'test://static-text',
    name: 'static_text',
    description: 'A static text resource for testing.',
    mimeType: 'text/plain',
  })
  staticText(): string {
    return 'This is the content of the static text resource.';
  }

  /** A Buffer is sent as a base64 `blob`. */
  @Resource({
    uri: 'test://static-binary',
    name: 'static_binary',
    description: 'A static binary resource (a PNG image) for testing.',
    mimeType: 'image/png',
  })
  staticBinary(): Buffer {
    return Buffer.from(PNG_1X1_BASE64, 'base64');
  }

  @Resource({
    uri: 'test://watched-resource',
    name: 'watched_resource',
    description: 'A resource clients subscribe to (resources/subscribe, 2025 wire).',
    mimeType: 'text/plain',
  })
  watched(): string {
    return 'Watched resource content.';
  }

  @ResourceTemplate({
    uriTemplate: 'test://template/{id}/data',
    name: 'template_data',
    description: 'Data for any id, e.g. test://template/123/data.',
    mimeType: 'application/json',
  })
  templateData(@Args('id') id: string) {
    return { id, templateTest: true, data: `Data for ID: ${id}` };
  }
}
