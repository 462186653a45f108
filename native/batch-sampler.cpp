// Hearth's batch sampler: samples the sequences of one decoded batch in a single native call.
//
// node-llama-cpp samples each sequence of a batch with its own call (`AddonContext.sampleToken`):
// an async worker per token, handed to libuv's thread pool and back, one after another (they may
// not overlap: llama.cpp's first read of a decode's outputs reorders them in place). This file
// adds `sampleTokens(context, indexes, samplers, threads)`: the same sampling, the same samplers
// (node-llama-cpp's own `AddonSampler::sample` and `acceptToken`, compiled in from its sources),
// for every sequence of the step in one worker, optionally spread over a few threads.
//
// It is built against node-llama-cpp's installed addon headers and links the llama.cpp libraries
// node-llama-cpp has already loaded (scripts/build-batch-sampler.ts); the worker loads it only
// when it was built for the node-llama-cpp version it runs (src/workers/engine/batch-sampler.ts).
// The objects it is handed are node-llama-cpp's (`_ctx`, `_sampler`), unwrapped as that addon
// wraps them: the class layouts come from the very headers that addon was compiled from.

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "AddonContext.h"
#include "AddonSampler.h"
#include "llama.h"
#include "napi.h"

#ifndef HEARTH_BUILT_FOR
#error "HEARTH_BUILT_FOR (the node-llama-cpp version built against) must be defined"
#endif

namespace {

constexpr int32_t kNoToken = -1;  // what node-llama-cpp's sampleToken answers when nothing could be sampled
constexpr int32_t kFailed = -2;   // this sequence's sampling threw; its message is in `errors`

class BatchSampleWorker : public Napi::AsyncWorker {
  public:
    BatchSampleWorker(Napi::Env env, AddonContext* context, std::vector<int32_t> indexes,
                      std::vector<AddonSampler*> samplers, size_t threads)
        : Napi::AsyncWorker(env, "HearthBatchSampleWorker"),
          context(context),
          indexes(std::move(indexes)),
          samplers(std::move(samplers)),
          threads(threads),
          tokens(this->indexes.size(), kNoToken),
          errors(this->indexes.size()),
          deferred(Napi::Promise::Deferred::New(env)) {
        // Kept alive until the worker is done, as node-llama-cpp's own sampling worker does.
        context->Ref();
        for (AddonSampler* sampler : this->samplers) sampler->Ref();
    }

    ~BatchSampleWorker() override {
        context->Unref();
        for (AddonSampler* sampler : samplers) sampler->Unref();
    }

    Napi::Promise Promise() { return deferred.Promise(); }

  protected:
    void Execute() override {
        if (context->disposed || context->ctx == nullptr) {
            SetError("The context is disposed");
            return;
        }
        if (llama_get_logits(context->ctx) == nullptr) {
            SetError("This model does not support token generation");
            return;
        }
        const size_t count = indexes.size();
        if (count == 0) return;
        // The first read of the decode's outputs puts them in order, in place: alone, before any
        // thread reads them. Later reads find nothing to reorder and only read.
        llama_get_logits_ith(context->ctx, indexes[0]);
        const size_t lanes = std::max<size_t>(1, std::min(threads, count));
        if (lanes == 1) {
            for (size_t i = 0; i < count; i++) SampleOne(i);
            return;
        }
        std::vector<std::thread> helpers;
        helpers.reserve(lanes - 1);
        for (size_t lane = 1; lane < lanes; lane++) {
            helpers.emplace_back([this, lane, lanes, count]() {
                for (size_t i = lane; i < count; i += lanes) SampleOne(i);
            });
        }
        for (size_t i = 0; i < count; i += lanes) SampleOne(i);
        for (std::thread& helper : helpers) helper.join();
    }

    void OnOK() override {
        Napi::Env env = Env();
        Napi::Int32Array sampled = Napi::Int32Array::New(env, tokens.size());
        Napi::Array failures = Napi::Array::New(env, tokens.size());
        for (size_t i = 0; i < tokens.size(); i++) {
            sampled[i] = tokens[i];
            if (tokens[i] == kFailed) failures.Set(static_cast<uint32_t>(i), Napi::String::New(env, errors[i]));
        }
        Napi::Object result = Napi::Object::New(env);
        result.Set("tokens", sampled);
        result.Set("errors", failures);
        deferred.Resolve(result);
    }

    void OnError(const Napi::Error& error) override { deferred.Reject(error.Value()); }

  private:
    // What node-llama-cpp's sampling worker does for one token without probabilities: the
    // sampler's chain (grammar checked against the sampled token first), then the token accepted.
    void SampleOne(size_t i) {
        try {
            AddonSampler* sampler = samplers[i];
            sampler->rebuildChainIfNeeded();
            llama_token_data_array candidates;
            sampler->sample(context->ctx, indexes[i], candidates, false);
            if (candidates.size == 0 || candidates.selected < 0 ||
                candidates.selected >= static_cast<int64_t>(candidates.size)) {
                tokens[i] = kNoToken;
                return;
            }
            const llama_token token = candidates.data[candidates.selected].id;
            try {
                sampler->acceptToken(token);
            } catch (const std::exception& error) {
                tokens[i] = kFailed;
                errors[i] = std::string("Failed to accept token in sampler: ") + error.what();
                return;
            }
            tokens[i] = token;
        } catch (const std::exception& error) {
            tokens[i] = kFailed;
            errors[i] = error.what();
        } catch (...) {
            tokens[i] = kFailed;
            errors[i] = "Unknown error when sampling";
        }
    }

    AddonContext* context;
    std::vector<int32_t> indexes;
    std::vector<AddonSampler*> samplers;
    size_t threads;
    std::vector<int32_t> tokens;
    std::vector<std::string> errors;
    Napi::Promise::Deferred deferred;
};

// sampleTokens(context, indexes: Int32Array, samplers: object[], threads: number)
//   → Promise<{ tokens: Int32Array, errors: (string | undefined)[] }>
Napi::Value SampleTokens(const Napi::CallbackInfo& info) {
    // node-llama-cpp's addon is built without C++ exceptions in node-addon-api, and so is this.
    Napi::Env env = info.Env();
    const auto fail = [&env](Napi::Error error) {
        error.ThrowAsJavaScriptException();
        return env.Undefined();
    };
    if (info.Length() < 4 || !info[0].IsObject() || !info[1].IsTypedArray() || !info[2].IsArray() ||
        !info[3].IsNumber()) {
        return fail(Napi::TypeError::New(env, "sampleTokens(context, indexes: Int32Array, samplers: object[], threads: number)"));
    }
    if (info[1].As<Napi::TypedArray>().TypedArrayType() != napi_int32_array) {
        return fail(Napi::TypeError::New(env, "indexes must be an Int32Array"));
    }
    Napi::Int32Array list = info[1].As<Napi::Int32Array>();
    Napi::Array given = info[2].As<Napi::Array>();
    if (given.Length() != list.ElementLength()) {
        return fail(Napi::RangeError::New(env, "indexes and samplers differ in length"));
    }
    AddonContext* context = Napi::ObjectWrap<AddonContext>::Unwrap(info[0].As<Napi::Object>());
    if (context == nullptr) return env.Undefined();  // not a wrapped object: its exception is pending
    std::vector<int32_t> indexes(list.ElementLength());
    std::vector<AddonSampler*> samplers(list.ElementLength());
    for (size_t i = 0; i < indexes.size(); i++) {
        indexes[i] = list[i];
        Napi::Value sampler = given.Get(static_cast<uint32_t>(i));
        if (!sampler.IsObject()) return fail(Napi::TypeError::New(env, "every sampler must be node-llama-cpp's native sampler"));
        samplers[i] = Napi::ObjectWrap<AddonSampler>::Unwrap(sampler.As<Napi::Object>());
        if (samplers[i] == nullptr) return env.Undefined();
    }
    const double threads = info[3].As<Napi::Number>().DoubleValue();
    const size_t lanes = threads >= 1 ? static_cast<size_t>(std::min(threads, 64.0)) : 1;
    auto* worker = new BatchSampleWorker(env, context, std::move(indexes), std::move(samplers), lanes);
    worker->Queue();
    return worker->Promise();
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
    exports.Set("sampleTokens", Napi::Function::New(env, SampleTokens));
    exports.Set("builtFor", Napi::String::New(env, HEARTH_BUILT_FOR));
    return exports;
}

}  // namespace

NODE_API_MODULE(hearth_batch_sampler, Init)
