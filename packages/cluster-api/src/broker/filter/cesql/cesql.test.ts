/**
 * CESQL v1 conformance, table-driven. The rows restate the cases of the CloudEvents conformance
 * suite (cloudevents/spec cesql/cesql_tck: literals, operators, LIKE, casts, functions, context
 * attributes, the spec's examples and the Subscriptions API recreations) in this file's own format,
 * with v1.0's rules where the suite's older files disagree (`NOT 10` is false, `5 + TRUE` is 6, a
 * missing attribute is an error), plus cases for IN, EXISTS, keyword case and parse errors that the
 * spec text defines.
 */
import { describe, expect, it } from 'vitest';
import type { AttributeValue } from '../../event/event.js';
import { evaluate } from './evaluate.js';
import { CesqlParseError } from './lexer.js';
import { parseCesql } from './parser.js';
import type { CesqlErrorKind, Value } from './values.js';

type Row = [expression: string, result: Value, error?: CesqlErrorKind, event?: Record<string, AttributeValue>];

const BASE = { specversion: '1.0', id: 'myId', source: 'localhost.localdomain', type: 'myType' };

const TABLES: Record<string, Row[]> = {
  literals: [
    ['TRUE', true], ['FALSE', false], ['0', 0], ['1', 1], ["'abc'", 'abc'], ['"abc"', 'abc'], ["'aBc'", 'aBc'], ['"AbC"', 'AbC'],
    [`'a"b\\'c'`, `a"b'c`], [`"a'b\\"c"`, `a'b"c`], ['-2147483648', -2147483648], ['+7', 7],
  ],
  'binary comparison': [
    ['TRUE = FALSE', false], ['FALSE = FALSE', true], ['1 = 2', false], ['2 = 2', true], ["'abc' = '123'", false], ["'abc' = 'abc'", true],
    ['missing = 2', false, 'missingAttribute'], ['TRUE != FALSE', true], ['FALSE != FALSE', false], ['1 != 2', true], ['2 != 2', false],
    ["'abc' != '123'", true], ["'abc' != 'abc'", false], ['missing != 2', false, 'missingAttribute'], ['TRUE <> FALSE', true],
    ['FALSE <> FALSE', false], ['1 <> 2', true], ['2 <> 2', false], ["'abc' <> '123'", true], ["'abc' <> 'abc'", false],
    ['missing <> 2', false, 'missingAttribute'], ['2 <= 2', true], ['3 <= 2', false], ['1 < 2', true], ['2 < 2', false], ['2 >= 2', true],
    ['2 >= 3', false], ['2 > 1', true], ['2 > 2', false], ['missing <= 2', false, 'missingAttribute'], ["true = 'TRUE'", false], ["'TRUE' = true", true],
  ],
  'binary logic': [
    ['FALSE AND FALSE', false], ['FALSE AND TRUE', false], ['TRUE AND FALSE', false], ['TRUE AND TRUE', true],
    ['false and (1 != 1 / 0)', false], ['true and (1 != 1 / 0)', false, 'math'], ['FALSE OR FALSE', false], ['FALSE OR TRUE', true],
    ['TRUE OR FALSE', true], ['TRUE OR TRUE', true], ['true or (1 != 1 / 0)', true], ['false or (1 != 1 / 0)', false, 'math'],
    ['FALSE XOR FALSE', false], ['FALSE XOR TRUE', true], ['TRUE XOR FALSE', true], ['TRUE XOR TRUE', false],
  ],
  'binary math': [
    ['4 * 2 + 4 / 2', 10], ['4 * (2 + 4) / 2', 12], ['5 / 3', 1], ['5 / 0', 0, 'math'], ['5 % 2', 1], ['5 % 0', 0, 'math'],
    ['missing / 0', 0, 'missingAttribute'], ['missing % 0', 0, 'missingAttribute'], ['4 + 1', 5], ['-4 + 1', -3], ['-4 + -1', -5],
    ['4 + -1', 3], ['4 - 1', 3], ['-4 - 1', -5], ["'5' + 3", 8], ["5 + '3'", 8], ["'5' + '3'", 8], ['5 + TRUE', 6],
    ["'5avc4' + 10", 10, 'cast'], ['-7 / 2', -3], ['-7 % 2', -1],
  ],
  'casting functions': [
    ["INT('1')", 1], ["INT('-1')", -1], ['INT(1)', 1], ['INT(-1)', -1], ['INT(TRUE)', 1], ['INT(FALSE)', 0], ["INT('ABC')", 0, 'cast'],
    ["BOOL('TRUE')", true], ['BOOL("false")', false], ['BOOL(TRUE)', true], ['BOOL(FALSE)', false], ["BOOL('ABC')", false, 'cast'],
    ['BOOL(1)', true], ['BOOL(0)', false], ['BOOL(100)', true], ['BOOL(-50)', true], ['STRING(TRUE)', 'true'], ['STRING(FALSE)', 'false'],
    ['STRING(1)', '1'], ['STRING(-1)', '-1'], ['STRING("abc")', 'abc'], ["IS_INT('12')", true], ["IS_INT('1a')", false],
    ["IS_BOOL('False')", true], ["IS_BOOL('no')", false],
  ],
  'context attributes': [
    ['id', 'myId'], ['subject', 'mySubject', undefined, { subject: 'mySubject' }], ['subject', false, 'missingAttribute'],
    ['mybool', true, undefined, { mybool: true }], ['myint', 10, undefined, { myint: 10 }], ['myext', 'my extension', undefined, { myext: 'my extension' }],
    ['source', 'http://localhost/source', undefined, { source: 'http://localhost/source' }],
    ['time', '2018-04-26T14:48:09+02:00', undefined, { time: '2018-04-26T14:48:09+02:00' }],
  ],
  'integer functions': [['ABS(10)', 10], ['ABS(-10)', 10], ['ABS(0)', 0], ['ABS(-2147483648)', 2147483647, 'math']],
  like: [
    ["'abc' LIKE 'abc'", true], ["'ab\\c' LIKE 'ab\\c'", true], ["'abc' NOT LIKE 'abc'", false], ["'abc' LIKE 'a%b%c'", true],
    ["'azbc' LIKE 'a%b%c'", true], ["'azzzbzzzc' LIKE 'a%b%c'", true], ["'a%b%c' LIKE 'a%b%c'", true], ["'ac' LIKE 'abc'", false],
    ["'' LIKE 'abc'", false], ["'.ab.cde.' LIKE '.%.%.'", true], ["'ab.cde' LIKE '.%.%.'", false], ["'abc' LIKE 'a_b_c'", false],
    ["'a_b_c' LIKE 'a_b_c'", true], ["'abzc' LIKE 'a_b_c'", false], ["'azbc' LIKE 'a_b_c'", false], ["'azbzc' LIKE 'a_b_c'", true],
    ["'.a.b.' LIKE '._._.'", true], ["'abcd.' LIKE '._._.'", false], ["'a_b_c' LIKE 'a\\_b\\_c'", true], ["'a_b_c' NOT LIKE 'a\\_b\\_c'", false],
    ["'azbzc' LIKE 'a\\_b\\_c'", false], ["'abc' LIKE 'a\\_b\\_c'", false], ["'abc' LIKE 'a\\%b\\%c'", false], ["'a%b%c' LIKE 'a\\%b\\%c'", true],
    ["'azbzc' LIKE 'a\\%b\\%c'", false], ["myext LIKE 'abc%123\\%456\\_d_f'", true, undefined, { myext: 'abc123123%456_dzf' }],
    ["myext NOT LIKE 'abc%123\\%456\\_d_f'", false, undefined, { myext: 'abc123123%456_dzf' }], ["234 LIKE '23_'", true],
    ["2344 LIKE '23%'", true], ["2344 LIKE '23_'", false], ["TRUE LIKE 'tr%'", true], ["TRUE LIKE '%ue'", true], ["FALSE LIKE 'tr%'", false],
    ["FALSE LIKE 'fal%'", true], [`'${'a'.repeat(60)}' LIKE '%a%a%a%a%a%a%a%a%b'`, false],
  ],
  negate: [['-10', -10], ['--10', 10], ["-'10'", -10], ["--'10'", 10], ['-TRUE', -1], ['-missing', 0, 'missingAttribute']],
  not: [['NOT TRUE', false], ['NOT FALSE', true], ["NOT 'TRUE'", false], ["NOT 'FALSE'", true], ['NOT 10', false], ['NOT missing', false, 'missingAttribute']],
  'spec examples': [
    ['int(hop) < int(ttl) and int(hop) < 1000', true, undefined, { hop: '5', ttl: '10' }],
    ['INT(hop) < INT(ttl) AND INT(hop) < 1000', true, undefined, { hop: '5', ttl: '10' }],
    ['hop < ttl', true, undefined, { hop: '5', ttl: '10' }], ['sequence = 5', true, undefined, { sequence: '5' }],
    ['sequence = 5', false, undefined, { sequence: '6' }],
    ["firstname = 'Francesco' OR subject = 'Francesco'", true, undefined, { subject: 'Francesco', firstname: 'Doug' }],
    ["firstname = 'Francesco' OR subject = 'Francesco'", true, undefined, { firstname: 'Francesco', subject: 'Doug' }],
    ["(firstname = 'Francesco' AND lastname = 'Guardiani') OR subject = 'Francesco Guardiani'", true, undefined, { subject: 'Doug', firstname: 'Francesco', lastname: 'Guardiani' }],
    ["(firstname = 'Francesco' AND lastname = 'Guardiani') OR subject = 'Francesco Guardiani'", true, undefined, { subject: 'Francesco Guardiani', firstname: 'Doug', lastname: 'Davis' }],
    ['EXISTS subject', true, undefined, { subject: 'Francesco Guardiani' }],
  ],
  'string functions': [
    ["LENGTH('abc')", 3], ["LENGTH('')", 0], ["LENGTH('2')", 1], ['LENGTH(TRUE)', 4], ["CONCAT('a', 'b', 'c')", 'abc'], ['CONCAT()', ''],
    ["CONCAT('a')", 'a'], ["CONCAT_WS(',', 'a', 'b', 'c')", 'a,b,c'], ["CONCAT_WS(',')", ''], ["CONCAT_WS(',', 'a')", 'a'],
    ['CONCAT_WS()', false, 'missingFunction'], ["LOWER('ABC')", 'abc'], ["LOWER('AbC')", 'abc'], ["LOWER('abc')", 'abc'],
    ["UPPER('ABC')", 'ABC'], ["UPPER('AbC')", 'ABC'], ["UPPER('abc')", 'ABC'], ["TRIM('   a b c   ')", 'a b c'], ["TRIM('   a b c')", 'a b c'],
    ["TRIM('a b c   ')", 'a b c'], ["TRIM('a b c')", 'a b c'], ["LEFT('abc', 2)", 'ab'], ["LEFT('abc', 10)", 'abc'], ["LEFT('', 0)", ''],
    ["LEFT('abc', -2)", 'abc', 'functionEvaluation'], ["RIGHT('abc', 2)", 'bc'], ["RIGHT('abc', 10)", 'abc'], ["RIGHT('', 0)", ''],
    ["RIGHT('abc', -2)", 'abc', 'functionEvaluation'], ["SUBSTRING('abcdef', 1)", 'abcdef'], ["SUBSTRING('abcdef', 2)", 'bcdef'],
    ["SUBSTRING('Quadratically', 5)", 'ratically'], ["SUBSTRING('Sakila', -3)", 'ila'], ["SUBSTRING('abcdef', 1, 6)", 'abcdef'],
    ["SUBSTRING('abcdef', 2, 4)", 'bcde'], ["SUBSTRING('Sakila', -5, 3)", 'aki'], ["SUBSTRING('Quadratically', 0)", ''],
    ["SUBSTRING('Quadratically', 0, 1)", ''], ["SUBSTRING('abcdef', 10)", '', 'functionEvaluation'],
    ["SUBSTRING('abcdef', -10)", '', 'functionEvaluation'], ["SUBSTRING('abcdef', 10, 10)", '', 'functionEvaluation'],
    ["SUBSTRING('abcdef', -10, 10)", '', 'functionEvaluation'], ['NOSUCH(1)', false, 'missingFunction'],
  ],
  'sub expressions': [['(TRUE)', true], ['4 * (2 + 3)', 20], ['(2 + 3) * 4', 20]],
  'subscriptions API recreations': [
    ["source LIKE 'https://%'", true, undefined, { source: 'https://example.com' }], ["source LIKE 'https://%'", false, undefined, { source: 'http://example.com' }],
    ["myext LIKE 'custom%'", true, undefined, { myext: 'customext' }], ["myext LIKE 'custom%'", false, 'missingAttribute'],
    ["type like '%.error'", true, undefined, { type: 'com.github.error' }], ["type like '%.error'", false, undefined, { type: 'com.github.success' }],
    ["myext LIKE '%ext'", true, undefined, { myext: 'customext' }], ["id = 'myId'", true], ["id = 'myId'", false, undefined, { id: 'notmyId' }],
    ["myext = 'customext'", true, undefined, { myext: 'customext' }], ["myext = 'customext'", false, 'missingAttribute'],
    ["id LIKE 'my%' AND source LIKE '%.ca'", true, undefined, { source: 'http://www.some-website.ca' }],
    ["id LIKE 'my%' AND source LIKE '%.ca'", false, undefined, { source: 'http://www.some-website.com' }],
    ["type LIKE 'example.%' AND myext LIKE 'custom%'", false, 'missingAttribute', { type: 'example.event.type' }],
    ["id LIKE 'my%' OR source LIKE '%.ca'", true, undefined, { id: 'notmyId', source: 'http://www.some-website.ca' }],
    ["id LIKE 'my%' OR source LIKE '%.ca'", false, undefined, { id: 'notmyId', source: 'http://www.some-website.com' }],
    ["id LIKE 'my%' OR myext LIKE '%ext'", false, 'missingAttribute', { id: 'notmyId' }],
    ["(id = 'myId' OR type LIKE '%.success') AND (id = 'notmyId' OR source LIKE 'https://%' OR type LIKE '%.warning')", true, undefined, { type: 'example.event.warning', source: 'http://localhost.localdomain' }],
    ["(id = 'myId' OR type LIKE '%.success') AND (id = 'notmyId' OR source LIKE 'https://%' OR type LIKE '%.warning')", false, undefined, { id: 'notmyId', type: 'example.event.warning', source: 'http://localhost.localdomain' }],
  ],
  'in and exists (spec §3.4.4, §3.4.5)': [
    ["'b' IN ('a', 'b')", true], ["'c' IN ('a', 'b')", false], ["'c' NOT IN ('a', 'b')", true], ['3 IN (1, 2, 3)', true],
    ["3 IN ('1', '3')", true], ["'3' IN (3)", true], ["type IN ('myType', 'other')", true], ['missing IN (1)', false, 'missingAttribute'],
    ['EXISTS id', true], ['EXISTS nosuch', false], ['NOT EXISTS nosuch', true], ["exists ID", true], ['true AnD fAlSe', false],
  ],
};

const PARSE_ERRORS = ['', '(1 + 2', '1 +', "x LIKE y", "'unterminated", '2147483648', 'EXISTS 1', "'a' IN ()", '1 2', 'a_b = 1', '@', 'CONCAT(1,)'];

describe('CESQL v1', () => {
  for (const [suite, rows] of Object.entries(TABLES)) {
    it.each(rows)(`${suite}: %s`, (expression, result, error, event) => {
      const r = evaluate(parseCesql(expression), { ...BASE, ...event });
      expect(r.value).toBe(result);
      expect(r.errors.map((e) => e.kind)).toEqual(error ? [error] : []);
    });
  }

  it.each(PARSE_ERRORS)('parse error: %j', (expression) => {
    expect(() => parseCesql(expression)).toThrow(CesqlParseError);
  });

  it('keeps AND, OR and XOR at one level, left to right, under comparisons', () => {
    expect(evaluate(parseCesql('TRUE OR TRUE AND FALSE'), BASE).value).toBe(false);
    expect(evaluate(parseCesql('1 = 1 AND 2 = 2'), BASE).value).toBe(true);
  });
});
