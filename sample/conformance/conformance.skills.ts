import { Injectable } from '@nestjs/common';
import { fileURLToPath } from 'node:url';
import { Skill } from 'nestjs-model-context';

/**
 * The skills the SEP-2640 scenarios of the conformance suite read: a folder skill with a
 * reference, a template directory and a nested subdirectory (for resources/directory/read),
 * and one skill given inline under a prefix.
 */
@Injectable()
export class ConformanceSkills {
  @Skill()
  folder(): string {
    // Specs and the sample run from dist/; the skill files stay in the source tree.
    return fileURLToPath(new URL('../../../sample/conformance/skills/', import.meta.url));
  }

  @Skill({ prefix: 'acme/billing' })
  refunds() {
    return {
      files: {
        'SKILL.md':
          '---\nname: refunds\ndescription: Process customer refund requests per company policy\n---\n\nRefund within 30 days; see examples/email.md for the reply.\n',
        'examples/email.md': 'Dear customer, your refund is on its way.\n',
      },
    };
  }
}
