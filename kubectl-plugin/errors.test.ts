import { describe, expect, it } from 'vitest';
import { CliError, ConnectionError, ServerError, describeError } from './errors.js';

describe('describeError', () => {
  it('prints an admission refusal or RBAC denial as one line with the server’s message', () => {
    expect(describeError(new ServerError(403, 'admission webhook "subnamespaceanchors.hnc.x-k8s.io" denied the request: nope'))).toEqual({
      text: 'Error: admission webhook "subnamespaceanchors.hnc.x-k8s.io" denied the request: nope',
      exitCode: 1,
    });
    expect(
      describeError(new ServerError(403, 'namespaces "x" is forbidden: User "bob" cannot get resource "namespaces"\nin the namespace "x"'))
        .text,
    ).toBe('Error: namespaces "x" is forbidden: User "bob" cannot get resource "namespaces" in the namespace "x"');
  });

  it('says what kubectl says for 401', () => {
    expect(describeError(new ServerError(401, 'Unauthorized')).text).toBe('Error: You must be logged in to the server (Unauthorized)');
    const webhook =
      'admission webhook "hierarchyconfigurations.hnc.x-k8s.io" denied the request: User carol is not authorized to modify the subtree of a, which is the proposed parent';
    expect(describeError(new ServerError(401, webhook)).text).toBe(`Error: ${webhook}`);
  });

  it('names the server it could not reach', () => {
    expect(describeError(new ConnectionError('https://127.0.0.1:1', 'connect ECONNREFUSED 127.0.0.1:1'))).toEqual({
      text: 'Error: Unable to connect to the server at https://127.0.0.1:1: connect ECONNREFUSED 127.0.0.1:1',
      exitCode: 1,
    });
  });

  it('prints the plugin’s own messages as they are, with their exit code', () => {
    expect(describeError(new CliError('Cannot set both --allowCascadingDeletion and --forbidCascadingDeletion'))).toEqual({
      text: 'Cannot set both --allowCascadingDeletion and --forbidCascadingDeletion',
      exitCode: 1,
    });
    expect(describeError(new CliError('x', 2)).exitCode).toBe(2);
  });

  it('prints anything else as one Error line', () => {
    expect(describeError(new Error('bad\nthing'))).toEqual({ text: 'Error: bad thing', exitCode: 1 });
    expect(describeError('odd')).toEqual({ text: 'Error: odd', exitCode: 1 });
  });
});
