// authport passkey.js: runs Auth.js's WebAuthn ceremonies from the default
// sign-in page. Every <form data-authport-passkey data-options-url="…">
// gets its submit intercepted: the script asks the options URL what to do
// (with the e-mail field, when filled in), runs navigator.credentials.create
// or .get, writes the credential JSON into the hidden "data" field and the
// action into "action", and submits the form. No dependencies, no inline
// handlers.
(function () {
  "use strict";

  function toBuffer(s) {
    s = String(s).replace(/-/g, "+").replace(/_/g, "/");
    while (s.length % 4) s += "=";
    var bin = atob(s), out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out.buffer;
  }

  function toBase64url(buf) {
    if (!buf) return undefined;
    var bytes = new Uint8Array(buf), bin = "";
    for (var i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
    return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function descriptors(list) {
    return (list || []).map(function (d) {
      var out = { type: d.type, id: toBuffer(d.id) };
      if (d.transports) out.transports = d.transports;
      return out;
    });
  }

  function creationOptions(o) {
    var pk = Object.assign({}, o);
    pk.challenge = toBuffer(o.challenge);
    pk.user = Object.assign({}, o.user, { id: toBuffer(o.user.id) });
    if (o.excludeCredentials) pk.excludeCredentials = descriptors(o.excludeCredentials);
    return pk;
  }

  function requestOptions(o) {
    var pk = Object.assign({}, o);
    pk.challenge = toBuffer(o.challenge);
    if (o.allowCredentials) pk.allowCredentials = descriptors(o.allowCredentials);
    return pk;
  }

  function credentialJSON(c) {
    var r = c.response;
    var out = {
      id: c.id,
      rawId: toBase64url(c.rawId),
      type: c.type,
      clientExtensionResults: c.getClientExtensionResults ? c.getClientExtensionResults() : {},
      response: { clientDataJSON: toBase64url(r.clientDataJSON) }
    };
    if (c.authenticatorAttachment) out.authenticatorAttachment = c.authenticatorAttachment;
    if (r.attestationObject) {
      out.response.attestationObject = toBase64url(r.attestationObject);
      out.response.transports = r.getTransports ? r.getTransports() : [];
    } else {
      out.response.authenticatorData = toBase64url(r.authenticatorData);
      out.response.signature = toBase64url(r.signature);
      if (r.userHandle && r.userHandle.byteLength) out.response.userHandle = toBase64url(r.userHandle);
    }
    return out;
  }

  function field(form, name) {
    return form.querySelector('input[name="' + name + '"]');
  }

  function showError(form, message) {
    form.setAttribute("data-error", message);
    var box = form.querySelector("[data-authport-passkey-error]");
    if (box) box.textContent = message;
    if (window.console) console.error("passkey: " + message);
  }

  async function run(form) {
    var url = new URL(form.getAttribute("data-options-url"), window.location.href);
    var email = field(form, "email");
    if (email && email.value) url.searchParams.set("email", email.value);
    var res = await fetch(url.toString(), { credentials: "same-origin", headers: { Accept: "application/json" } });
    if (!res.ok) throw new Error("the server refused the passkey options (" + res.status + ")");
    var body = await res.json();
    var cred;
    if (body.action === "authenticate") {
      cred = await navigator.credentials.get({ publicKey: requestOptions(body.options) });
    } else if (body.action === "register") {
      cred = await navigator.credentials.create({ publicKey: creationOptions(body.options) });
    } else {
      throw new Error("unknown action " + body.action);
    }
    if (!cred) throw new Error("no credential");
    field(form, "action").value = body.action;
    field(form, "data").value = JSON.stringify(credentialJSON(cred));
    HTMLFormElement.prototype.submit.call(form);
  }

  function setup() {
    var forms = document.querySelectorAll("form[data-authport-passkey]");
    Array.prototype.forEach.call(forms, function (form) {
      if (!window.PublicKeyCredential || !navigator.credentials) {
        showError(form, "this browser does not support passkeys");
        return;
      }
      form.addEventListener("submit", function (event) {
        event.preventDefault();
        form.removeAttribute("data-error");
        run(form).catch(function (err) {
          showError(form, (err && err.message) || String(err));
        });
      });
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setup);
  } else {
    setup();
  }
})();
