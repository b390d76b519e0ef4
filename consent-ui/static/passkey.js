// Linkslot passkeys. Each form with data-passkey carries the options of a
// ceremony the server started (data-options, JSON with base64url byte
// fields). This script shows those forms when the browser has WebAuthn,
// runs navigator.credentials.create ("create") or .get ("get", "reauth")
// when one is submitted, puts the answer as JSON in its "credential" field
// and submits the form. Nothing is sent when the person cancels; the form
// says so and can be tried again. Without this script the forms stay
// hidden and the password forms work as always.
(function () {
  'use strict';
  if (!window.PublicKeyCredential || !navigator.credentials) {
    return;
  }

  function toBuffer(s) {
    var b64 = s.replace(/-/g, '+').replace(/_/g, '/');
    while (b64.length % 4) {
      b64 += '=';
    }
    var bin = atob(b64);
    var out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) {
      out[i] = bin.charCodeAt(i);
    }
    return out.buffer;
  }

  function toBase64URL(buf) {
    if (!buf) {
      return undefined;
    }
    var bytes = new Uint8Array(buf);
    var bin = '';
    for (var i = 0; i < bytes.length; i++) {
      bin += String.fromCharCode(bytes[i]);
    }
    return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }

  function decodeDescriptors(list) {
    (list || []).forEach(function (d) { d.id = toBuffer(d.id); });
  }

  function creationOptions(o) {
    var pk = o.publicKey;
    pk.challenge = toBuffer(pk.challenge);
    pk.user.id = toBuffer(pk.user.id);
    decodeDescriptors(pk.excludeCredentials);
    return { publicKey: pk };
  }

  function requestOptions(o) {
    var pk = o.publicKey;
    pk.challenge = toBuffer(pk.challenge);
    decodeDescriptors(pk.allowCredentials);
    return { publicKey: pk };
  }

  function encode(cred) {
    var r = cred.response;
    var out = {
      id: cred.id,
      rawId: toBase64URL(cred.rawId),
      type: cred.type,
      authenticatorAttachment: cred.authenticatorAttachment || undefined,
      clientExtensionResults: cred.getClientExtensionResults ? cred.getClientExtensionResults() : {},
      response: { clientDataJSON: toBase64URL(r.clientDataJSON) }
    };
    if (r.attestationObject) {
      out.response.attestationObject = toBase64URL(r.attestationObject);
      if (r.getTransports) {
        out.response.transports = r.getTransports();
      }
    } else {
      out.response.authenticatorData = toBase64URL(r.authenticatorData);
      out.response.signature = toBase64URL(r.signature);
      out.response.userHandle = toBase64URL(r.userHandle);
    }
    return JSON.stringify(out);
  }

  var unchanged = {
    create: 'No passkey was added',
    get: 'You are not signed in',
    reauth: 'Nothing was deleted'
  };

  function failure(kind, err) {
    var what = unchanged[kind];
    var name = err && err.name;
    if (kind === 'create' && name === 'InvalidStateError') {
      return what + ': this device already has a passkey for your Linkslot account.';
    }
    if (name === 'NotAllowedError' || name === 'AbortError') {
      return what + ': the passkey request was cancelled or timed out. Try again, or use your password.';
    }
    return what + ': this browser could not use a passkey (' + (name || 'unknown error') + '). Try again, or use your password.';
  }

  Array.prototype.forEach.call(document.querySelectorAll('form[data-passkey]'), function (form) {
    var kind = form.getAttribute('data-passkey');
    var status = form.querySelector('.passkey-status');
    var busy = false;
    form.hidden = false;
    form.addEventListener('submit', function (ev) {
      ev.preventDefault();
      if (busy || !form.reportValidity()) {
        return;
      }
      busy = true;
      status.className = 'passkey-status';
      status.textContent = 'Waiting for your passkey…';
      var options = JSON.parse(form.getAttribute('data-options'));
      var ceremony = kind === 'create'
        ? navigator.credentials.create(creationOptions(options))
        : navigator.credentials.get(requestOptions(options));
      ceremony.then(function (cred) {
        form.elements.credential.value = encode(cred);
        status.textContent = 'Checking your passkey…';
        form.submit();
      }).catch(function (err) {
        busy = false;
        status.className = 'passkey-status bad';
        status.textContent = failure(kind, err);
      });
    });
  });
}());
