/**
 * The project templates `create-func` renders: each template is a directory of files in which
 * placeholders like `{{name}}` are replaced at generation.
 */
import { fileURLToPath } from 'node:url';

/** The templates, in the order a prompt offers them (the first is the default). */
export const templateNames = ['http', 'cloudevents'] as const;
export type TemplateName = (typeof templateNames)[number];

/** One line per template, shown when asking which template to use. */
export const templateDescriptions: Readonly<Record<TemplateName, string>> = {
  http: 'answers plain HTTP requests with a text reply',
  cloudevents: 'answers a CloudEvent with a new CloudEvent',
};

/** The values a template's `{{placeholder}}` tokens are replaced with. */
export interface TemplateValues {
  /** The function's name: a DNS-1123 label, so it is safe in JSON, YAML, Markdown and paths. */
  name: string;
  /** Creation time, RFC 3339 (func.yaml `created`). */
  created: string;
}

/**
 * Files stored under another name, because `npm pack` never ships a file called `.gitignore`
 * (it would become the package's own ignore rules), so the template could not carry it.
 */
export const storedNames: Readonly<Record<string, string>> = {
  gitignore: '.gitignore',
};

export function isTemplateName(value: string): value is TemplateName {
  return (templateNames as readonly string[]).includes(value);
}

/** Absolute path of a template's directory inside this package. */
export function templateDir(name: TemplateName): string {
  if (!isTemplateName(name)) throw new Error(`unknown template "${String(name)}"`);
  return fileURLToPath(new URL(`../${name}/`, import.meta.url));
}

/** Replaces every known `{{key}}` token; unknown tokens are left alone. */
export function renderText(text: string, values: TemplateValues): string {
  return text.replace(/\{\{(\w+)\}\}/g, (token, key: string) =>
    Object.hasOwn(values, key) ? values[key as keyof TemplateValues] : token,
  );
}
