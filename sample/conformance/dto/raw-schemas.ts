type JsonObject = Record<string, unknown>;

// The suite compares these schemas key by key, so they are written out by hand rather than
// emitted from DTOs (a DTO cannot say `$anchor`, `if`/`then`/`else` or `enumNames`).

/** `json_schema_2020_12_tool`: advertised verbatim in tools/list (SEP-1613, SEP-2106). */
export const JSON_SCHEMA_2020_12_INPUT: JsonObject = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: {
    address: {
      $anchor: 'addressDef',
      type: 'object',
      properties: { street: { type: 'string' }, city: { type: 'string' } },
    },
  },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
    contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' },
    email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
};

/** SEP-1034: every primitive type of an elicitation form carries a `default`. */
export const SEP1034_DEFAULTS_FORM: JsonObject = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'User name', default: 'John Doe' },
    age: { type: 'integer', description: 'User age', default: 30 },
    score: { type: 'number', description: 'User score', default: 95.5 },
    status: {
      type: 'string',
      description: 'User status',
      enum: ['active', 'inactive', 'pending'],
      default: 'active',
    },
    verified: { type: 'boolean', description: 'Verification status', default: true },
  },
};

/** SEP-1330: the five enum shapes of an elicitation form. */
export const SEP1330_ENUMS_FORM: JsonObject = {
  type: 'object',
  properties: {
    untitledSingle: { type: 'string', title: 'Untitled single', enum: ['option1', 'option2', 'option3'] },
    titledSingle: {
      type: 'string',
      title: 'Titled single',
      oneOf: [
        { const: 'value1', title: 'First Option' },
        { const: 'value2', title: 'Second Option' },
        { const: 'value3', title: 'Third Option' },
      ],
    },
    legacyEnum: {
      type: 'string',
      title: 'Legacy titled enum',
      enum: ['opt1', 'opt2', 'opt3'],
      enumNames: ['Option One', 'Option Two', 'Option Three'],
    },
    untitledMulti: {
      type: 'array',
      title: 'Untitled multi',
      items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
    },
    titledMulti: {
      type: 'array',
      title: 'Titled multi',
      items: {
        anyOf: [
          { const: 'value1', title: 'First Choice' },
          { const: 'value2', title: 'Second Choice' },
          { const: 'value3', title: 'Third Choice' },
        ],
      },
    },
  },
};
