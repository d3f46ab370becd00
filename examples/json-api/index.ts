/**
 * A small JSON API that routes on path and method: a to-do list kept in memory.
 *
 *   GET    /todos          list            POST   /todos      create  {"title": "…"}
 *   GET    /todos/:id      read            PATCH  /todos/:id  update  {"title"?, "done"?}
 *   DELETE /todos/:id      delete
 *
 * Unknown paths answer 404, a known path with another method 405 with an Allow header, bad
 * input 400 — each as an RFC 9457 problem, like the runtime's own errors.
 *
 *   func-runtime examples/json-api
 */
import type { Context, StructuredReturn } from '@func/runtime';

export interface Todo {
  id: number;
  title: string;
  done: boolean;
}

type Params = Record<string, string>;
type Route = (context: Context, params: Params) => StructuredReturn;
interface Resource {
  pattern: RegExp;
  methods: Record<string, Route>;
}

const maxTitleLength = 200;
const todos = new Map<number, Todo>();
let nextId = 1;

/** Empties the list (tests start from a known state). */
export function reset(): void {
  todos.clear();
  nextId = 1;
}

function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): StructuredReturn {
  return { statusCode, headers: { 'content-type': 'application/json', ...headers }, body };
}

function problem(status: number, title: string, detail: string, headers: Record<string, string> = {}): StructuredReturn {
  return { statusCode: status, headers: { 'content-type': 'application/problem+json', ...headers }, body: { status, title, detail } };
}

/** The fields of a create or update body, or a problem saying what is wrong with it. */
function readTodoInput(body: unknown, creating: boolean): Partial<Todo> | StructuredReturn {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return problem(400, 'Invalid body', 'Send a JSON object (content-type: application/json).');
  }
  const { title, done, ...rest } = body as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) return problem(400, 'Invalid body', `Unknown field(s): ${unknown.join(', ')}.`);
  if ((creating || title !== undefined) && (typeof title !== 'string' || title.trim() === '' || title.length > maxTitleLength)) {
    return problem(400, 'Invalid title', `title must be a non-empty string of at most ${maxTitleLength} characters.`);
  }
  if (done !== undefined && typeof done !== 'boolean') return problem(400, 'Invalid done', 'done must be true or false.');
  return { ...(title !== undefined && { title: (title as string).trim() }), ...(done !== undefined && { done }) };
}

/** Lookups and parsers return either their value or the problem to answer with. */
function isProblem<T extends object>(v: T | StructuredReturn): v is StructuredReturn {
  return 'statusCode' in v;
}

function found(params: Params): Todo | StructuredReturn {
  const todo = todos.get(Number(params.id));
  return todo ?? problem(404, 'Not found', `There is no todo ${params.id}.`);
}

const resources: Resource[] = [
  {
    pattern: /^\/todos\/?$/,
    methods: {
      GET: () => json(200, [...todos.values()]),
      POST: (context) => {
        const input = readTodoInput(context.body, true);
        if (isProblem(input)) return input;
        const todo: Todo = { id: nextId++, title: input.title!, done: input.done ?? false };
        todos.set(todo.id, todo);
        return json(201, todo, { location: `/todos/${todo.id}` });
      },
    },
  },
  {
    pattern: /^\/todos\/(?<id>[1-9][0-9]{0,15})$/,
    methods: {
      GET: (_context, params) => {
        const todo = found(params);
        return isProblem(todo) ? todo : json(200, todo);
      },
      PATCH: (context, params) => {
        const todo = found(params);
        if (isProblem(todo)) return todo;
        const input = readTodoInput(context.body, false);
        if (isProblem(input)) return input;
        Object.assign(todo, input);
        return json(200, todo);
      },
      DELETE: (_context, params) => {
        const todo = found(params);
        if (isProblem(todo)) return todo;
        todos.delete(todo.id);
        return { statusCode: 204 };
      },
    },
  },
];

export function handle(context: Context): StructuredReturn {
  for (const { pattern, methods } of resources) {
    const match = pattern.exec(context.path);
    if (!match) continue;
    const route = Object.hasOwn(methods, context.method) ? methods[context.method] : undefined;
    if (!route) {
      const allow = Object.keys(methods).join(', ');
      return problem(405, 'Method not allowed', `${context.path} allows ${allow}.`, { allow });
    }
    return route(context, { ...match.groups });
  }
  return problem(404, 'Not found', `No resource at ${context.path}; try /todos.`);
}
