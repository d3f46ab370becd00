/** The OpenAPI 3.1 document of this service, built once from the catalog it serves. */
import type { Catalog } from './catalog.js';
import { ERROR_TYPE_PATTERN } from './catalog.js';

const problemResponse = (description: string, withChallenge = false): Record<string, unknown> => ({
  description,
  ...(withChallenge
    ? { headers: { 'WWW-Authenticate': { description: 'RFC 6750 Bearer challenge', schema: { type: 'string' } } } }
    : {}),
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/ApiError' } } },
});

const cachedHeaders = {
  ETag: { description: 'Validator for If-None-Match', schema: { type: 'string' } },
  'Cache-Control': { schema: { type: 'string' } },
};

const commonResponses = {
  '304': { description: 'Not modified: the If-None-Match tag still matches', headers: cachedHeaders },
  '401': problemResponse('Session required: the bearer token is missing, invalid or expired', true),
  '403': problemResponse('Unauthorized access: the token lacks the required scope', true),
  '405': problemResponse('Method not allowed (see Allow)'),
};

export const buildOpenApi = (catalog: Catalog, scope: string): Record<string, unknown> => ({
  openapi: '3.1.0',
  info: {
    title: 'Error descriptions',
    version: '1.0.0',
    description: 'Describes every error type the platform emits, with help for fixing it.',
  },
  security: [{ bearerAuth: [scope] }],
  paths: {
    '/api/v1/error/{error_type}': {
      get: {
        operationId: 'getErrorDescription',
        summary: 'Get a detailed description of the error',
        parameters: [
          {
            name: 'error_type',
            in: 'path',
            required: true,
            description: 'The error code identifying the type of error.',
            schema: { type: 'string', pattern: ERROR_TYPE_PATTERN.source },
          },
        ],
        responses: {
          '200': {
            description: 'Successful invocation',
            headers: cachedHeaders,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/ApiErrorDescription' } } },
          },
          '400': problemResponse('Bad Request: error_type is malformed'),
          '404': problemResponse('Not found: no such error type'),
          ...commonResponses,
        },
      },
    },
    '/api/v1/error': {
      get: {
        operationId: 'listErrorDescriptions',
        summary: 'List the descriptions of all error types',
        responses: {
          '200': {
            description: 'Successful invocation',
            headers: cachedHeaders,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/ApiErrorDescriptionList' } } },
          },
          ...commonResponses,
        },
      },
    },
  },
  components: {
    securitySchemes: {
      bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: `Requires the scope ${scope}` },
    },
    schemas: {
      ApiErrorDescription: {
        type: 'object',
        description: 'Description of an error',
        required: ['type', 'title', 'description'],
        additionalProperties: false,
        properties: {
          type: { type: 'string', format: 'uri', description: 'A reference to the error type resource' },
          title: {
            type: 'string',
            description: 'The title of the error. Can be used to uniquely identify the kind of error.',
            enum: catalog.entries().map((e) => e.title),
          },
          description: {
            type: 'string',
            description: 'A more detailed description of the error that may include help for fixing the issue.',
          },
        },
      },
      ApiErrorDescriptionList: {
        type: 'object',
        required: ['errors'],
        additionalProperties: false,
        properties: { errors: { type: 'array', items: { $ref: '#/components/schemas/ApiErrorDescription' } } },
      },
      ApiError: {
        type: 'object',
        description: 'RFC 9457 problem details',
        required: ['status', 'type', 'title'],
        properties: {
          status: { type: 'integer', description: 'The HTTP status code' },
          type: { type: 'string', format: 'uri-reference', description: 'A reference to the error type resource' },
          title: { type: 'string', description: 'The error type' },
          detail: { type: 'string', description: 'What went wrong in this occurrence' },
          instance: { type: 'string', description: 'A reference to this occurrence' },
          error_message: { type: 'string', deprecated: true, description: 'Same as detail' },
          error_type: { type: 'string', deprecated: true, description: 'Same as title' },
        },
      },
    },
  },
});
